import type { Actor } from '../domain/actor.ts';
import {
  type AuditAction,
  type AuditActor,
  type AuditEvent,
  asSeenByOwner,
  auditActions,
  commandLine,
} from '../domain/audit.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import { type Cursors, type Page, pageSize } from '../shared/pagination.ts';
import {
  type AuditEntryRow,
  appendAudit,
  deleteAuditBefore,
  listAudit,
} from '../store/audit.store.ts';
import type { Db } from '../store/database.ts';
import { type ManagementGuard, refusal } from './management-guard.ts';

/** An entry as a reader sees it. */
export interface AuditEntryView {
  /** The entry's position: entries are numbered in the order they were written. */
  id: string;
  at: Date;
  accountId: string | null;
  action: AuditAction;
  target: string | null;
  detail: Record<string, unknown> | null;
  actor: AuditActor;
}

export interface AuditFilter {
  /** Admins: one account's entries (others read their own whatever they pass). */
  accountId?: string | null | undefined;
  action?: string | null | undefined;
  since?: Date | null | undefined;
  until?: Date | null | undefined;
}

const day = 86_400_000; // ms

/**
 * Reading the audit log (issue 32 §3), and keeping it no longer than `retentionDays`. An
 * account reads the entries that concern it; an admin reads everyone's. Entries are written by
 * the services whose changes they record, in the same transaction (`appendAudit`).
 */
export class AuditService {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #cursors: Cursors;
  readonly #retentionDays: number;
  readonly #managers: Pick<ManagementGuard, 'right'>;

  constructor(deps: {
    db: Db;
    clock: Clock;
    cursors: Cursors;
    retentionDays: number;
    managers: Pick<ManagementGuard, 'right'>;
  }) {
    this.#managers = deps.managers;
    this.#db = deps.db;
    this.#clock = deps.clock;
    this.#cursors = deps.cursors;
    this.#retentionDays = deps.retentionDays;
  }

  /**
   * The caller's entries; an admin's, everyone's unless `filter.accountId` names one. Only a
   * caller with the full management right reads them (a key with spending limits manages
   * nothing, so it reads nothing here, an admin's included).
   */
  async list(
    actor: Actor,
    filter: AuditFilter,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<Page<AuditEntryView>> {
    const right = await this.#managers.right(actor);
    if (right !== 'full') throw refusal(right);
    const admin = actor.role === 'admin';
    if (!admin && filter.accountId != null && filter.accountId !== actor.accountId) {
      throw new AppError(ErrorCode.Forbidden, "Another account's audit log is for admins.");
    }
    const accountId = admin ? (filter.accountId ?? undefined) : actor.accountId;
    const page = await this.#page(actor.accountId, { ...filter, accountId }, first, after);
    return admin
      ? page
      : { ...page, nodes: page.nodes.map((entry) => asSeenByOwner(entry, actor.accountId)) };
  }

  /** Operator (command line): any account's entries, or everyone's. */
  async listAll(
    filter: AuditFilter,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<Page<AuditEntryView>> {
    return this.#page(null, filter, first, after);
  }

  /**
   * Records an event whose change is not a database write of its own (a signing key made, a
   * catalogue swapped); changes that are write their entry in their own transaction.
   */
  async record(event: AuditEvent, by: AuditActor = commandLine): Promise<void> {
    await appendAudit(this.#db, this.#clock.now(), by, event);
  }

  /** Removes what is older than the retention; returns how many entries went. */
  async purge(): Promise<number> {
    const before = new Date(this.#clock.now().getTime() - this.#retentionDays * day);
    return deleteAuditBefore(this.#db, before);
  }

  async #page(
    readerId: string | null,
    filter: AuditFilter,
    first: number | null | undefined,
    after: string | null | undefined,
  ): Promise<Page<AuditEntryView>> {
    const size = pageSize(first, 50);
    const action = filter.action ?? undefined;
    if (action !== undefined && !(auditActions as readonly string[]).includes(action)) {
      throw invalidInput([
        { field: 'action', message: `"${action}" is not an action: ${auditActions.join(', ')}` },
      ]);
    }
    if (filter.since != null && filter.until != null && filter.until <= filter.since) {
      throw invalidInput([{ field: 'until', message: 'must be after since' }]);
    }
    const cursors = this.#cursors.for(readerId, 'audit');
    const cursor =
      after == null
        ? undefined
        : cursors.decode(after, (v): v is { s: number } =>
            Number.isSafeInteger((v as { s?: unknown })?.s),
          ).s;
    const rows = await listAudit(this.#db, {
      accountId: filter.accountId ?? undefined,
      action: action as AuditAction | undefined,
      since: filter.since ?? undefined,
      until: filter.until ?? undefined,
      beforeSeq: cursor,
      limit: size + 1,
    });
    const nodes = rows.slice(0, size).map(viewOf);
    const last = rows[nodes.length - 1];
    return {
      nodes,
      pageInfo: {
        hasNextPage: rows.length > size,
        endCursor: last === undefined ? null : cursors.encode({ s: last.seq }),
      },
    };
  }
}

function viewOf(row: AuditEntryRow): AuditEntryView {
  return {
    id: String(row.seq),
    at: row.at,
    accountId: row.accountId,
    action: row.action,
    target: row.target,
    detail: row.detail,
    actor: row.actor,
  };
}
