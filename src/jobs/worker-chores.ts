import type { OutageLog } from '../observability/outage-log.ts';
import type { AuditService } from '../services/audit.service.ts';
import { taskEventRetentionMs } from '../services/task-updates.ts';
import type { UploadService } from '../services/upload.service.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { every, type Periodic } from '../shared/periodic.ts';
import type { Db } from '../store/database.ts';
import { isDatabaseUnavailable } from '../store/database-errors.ts';
import { pruneLog } from '../store/task-event.store.ts';
import type { BackendHealthService } from './backend-health.ts';
import { WebhookDeliverer, type WebhookDelivererOptions } from './webhook-deliverer.ts';

/** How often workers look for backends due a probe (the rules say how often each is). */
const healthCheckMs = 1_000; // 1 second
/** How often workers look for expired uploads to complete or forget. */
const uploadSweepMs = 60_000; // 1 minute
const eventPruneMs = 10 * 60_000; // 10 minutes
const auditPruneMs = 3_600_000; // 1 hour
/** Kept past the retention, so a cursor accepted at its last moment still finds its events. */
const eventPruneMargin = 3_600_000; // 1 hour

export interface WorkerChoresDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  /** Where the database being away is logged once and counted, not per turn. */
  outages: OutageLog;
  uploads: Pick<UploadService, 'sweepExpired'>;
  /** How often due webhook deliveries are looked for (`TASK_POLL_MS`). */
  pollMs: number;
  webhooks: Pick<WebhookDelivererOptions, 'box' | 'timeoutMs' | 'allowLocalhost' | 'network'>;
  /** The backends' probes. */
  health: Pick<BackendHealthService, 'checkDue'>;
  /** The audit log's retention. */
  audit: Pick<AuditService, 'purge'>;
}

/**
 * What worker processes do besides running tasks, each on its own schedule: probe backends
 * that are due, sweep expired uploads, prune the task event log and the audit log, send due webhook deliveries. A chore that fails is logged
 * and tried again on its next turn; `stop()` on each ends it.
 */
export function startWorkerChores(d: WorkerChoresDeps): Periodic[] {
  const chore = (
    intervalMs: number,
    failure: string,
    run: (signal: AbortSignal) => Promise<void>,
  ) =>
    every(intervalMs, async (signal) => {
      try {
        await run(signal);
      } catch (error) {
        if (isDatabaseUnavailable(error)) d.outages.report(failure, error);
        else d.log.warn({ err: error }, failure);
      }
    });
  const deliverer = new WebhookDeliverer({ db: d.db, clock: d.clock, log: d.log, ...d.webhooks });
  return [
    chore(healthCheckMs, 'backends could not be probed; trying again shortly', () =>
      d.health.checkDue(),
    ),
    chore(
      uploadSweepMs,
      'expired uploads could not be swept; trying again later',
      async (signal) => {
        await d.uploads.sweepExpired(d.log, signal);
      },
    ),
    chore(eventPruneMs, 'old task events could not be pruned; trying again later', async () => {
      const deleted = await pruneLog(d.db, taskEventRetentionMs + eventPruneMargin);
      if (deleted > 0) d.log.info({ deleted }, 'old task events pruned');
    }),
    chore(auditPruneMs, 'old audit entries could not be removed; trying again later', async () => {
      const deleted = await d.audit.purge();
      if (deleted > 0) d.log.info({ deleted }, 'audit entries past their retention removed');
    }),
    chore(d.pollMs, 'webhooks could not be delivered; trying again shortly', async (signal) => {
      // Send on until nothing is due (a failed attempt is due again only later).
      while ((await deliverer.deliverDue(signal)) > 0 && !signal.aborted);
    }),
  ];
}
