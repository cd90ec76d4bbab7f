import type { AuditAction, AuditActor, AuditEvent } from '../domain/audit.ts';
import type { Queryable } from './database.ts';

/** An entry as it is read back. */
export interface AuditEntryRow {
  seq: number;
  at: Date;
  accountId: string | null;
  action: AuditAction;
  target: string | null;
  detail: Record<string, unknown> | null;
  actor: AuditActor;
}

/** Appends one entry; call it in the transaction of the change it records. */
export async function appendAudit(
  q: Queryable,
  at: Date,
  actor: AuditActor,
  event: AuditEvent,
): Promise<void> {
  await q
    .insertInto('audit_log')
    .values({
      at,
      account_id: event.accountId,
      action: event.action,
      target: event.target,
      detail: event.detail === null ? null : JSON.stringify(event.detail),
      actor_account_id: actor.accountId,
      actor_credential: actor.credential,
      actor_address: actor.address,
    })
    .execute();
}

export interface AuditQuery {
  /** Only entries concerning this account. */
  accountId?: string | undefined;
  action?: AuditAction | undefined;
  since?: Date | undefined;
  until?: Date | undefined;
  /** Entries older than this position (a page's cursor). */
  beforeSeq?: number | undefined;
  limit: number;
}

/** Entries newest first. */
export async function listAudit(q: Queryable, query: AuditQuery): Promise<AuditEntryRow[]> {
  let select = q.selectFrom('audit_log').selectAll().orderBy('seq', 'desc').limit(query.limit);
  if (query.accountId !== undefined) select = select.where('account_id', '=', query.accountId);
  if (query.action !== undefined) select = select.where('action', '=', query.action);
  if (query.since !== undefined) select = select.where('at', '>=', query.since);
  if (query.until !== undefined) select = select.where('at', '<', query.until);
  if (query.beforeSeq !== undefined) select = select.where('seq', '<', String(query.beforeSeq));
  const rows = await select.execute();
  return rows.map((row) => ({
    seq: Number(row.seq),
    at: row.at,
    accountId: row.account_id,
    action: row.action as AuditAction,
    target: row.target,
    detail: row.detail as Record<string, unknown> | null,
    actor: {
      accountId: row.actor_account_id,
      credential: row.actor_credential,
      address: row.actor_address,
    },
  }));
}

/** Retention: removes entries written before `before`; returns how many. */
export async function deleteAuditBefore(q: Queryable, before: Date): Promise<number> {
  const result = await q.deleteFrom('audit_log').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
