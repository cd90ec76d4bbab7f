import type { AuditActor, AuditEvent } from '../domain/audit.ts';
import type { Clock } from '../shared/clock.ts';
import { appendAudit } from '../store/audit.store.ts';
import type { Db, Queryable } from '../store/database.ts';

/**
 * Runs a change and appends its audit entry in one transaction: the change is never without
 * its record, nor the record without its change. `event` sees the change's result and returns
 * null when nothing changed (a row that was not there).
 */
export async function audited<T>(
  d: { db: Db; clock: Clock },
  by: AuditActor,
  change: (q: Queryable) => Promise<T>,
  event: (result: T) => AuditEvent | null,
): Promise<T> {
  return d.db.transaction().execute(async (trx) => {
    const result = await change(trx);
    const entry = event(result);
    if (entry !== null) await appendAudit(trx, d.clock.now(), by, entry);
    return result;
  });
}
