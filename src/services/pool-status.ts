import type { ModelStatus } from '../domain/model.ts';
import type { Topic } from '../events/broadcast.ts';
import type { Db } from '../store/database.ts';
import { listModelStatuses } from '../store/model-status.store.ts';

/** How old this node's view may get when no change is announced (a missed notification). */
const refreshMs = 5_000; // 5 seconds

/**
 * Which models have every backend out of rotation, and which have a status an admin set, as this
 * node knows it: read at start, again whenever a node announces a change (`changes`), and every
 * few seconds in case an announcement was missed. The catalogue reads it on every request, from
 * memory: a model whose backends are all out reads `maintenance`, and takes no submission, until
 * a backend comes back; a status an admin set stands over the configuration's.
 */
export class PoolStatus {
  readonly #db: Db;
  #down: ReadonlySet<string> = new Set();
  #statuses: ReadonlyMap<string, ModelStatus> = new Map();
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #reading: Promise<void> | undefined;
  #again = false;

  constructor(db: Db) {
    this.#db = db;
  }

  /** Reads the first view, then follows announcements and the periodic read. */
  async start(changes: Topic): Promise<void> {
    this.#unsubscribe = changes.subscribe(() => void this.refresh());
    this.#timer = setInterval(() => void this.refresh(), refreshMs);
    this.#timer.unref();
    await this.refresh();
  }

  /** Whether every recorded backend of the model is out (false for a model without any). */
  isDown(modelId: string): boolean {
    return this.#down.has(modelId);
  }

  /** The status an admin set for the model, if any. */
  statusSet(modelId: string): ModelStatus | undefined {
    return this.#statuses.get(modelId);
  }

  /** Reads the view again; calls while a read is under way make one more read after it. */
  refresh(): Promise<void> {
    if (this.#reading !== undefined) {
      this.#again = true;
      return this.#reading;
    }
    this.#reading = this.#read().finally(() => {
      this.#reading = undefined;
      if (this.#again) {
        this.#again = false;
        void this.refresh();
      }
    });
    return this.#reading;
  }

  async #read(): Promise<void> {
    try {
      const rows = await this.#db
        .selectFrom('backends')
        .select('model_id')
        .groupBy('model_id')
        .having((eb) => eb.fn<boolean>('bool_and', [eb('state', '=', 'down')]), '=', true)
        .execute();
      this.#down = new Set(rows.map((r) => r.model_id));
      this.#statuses = await listModelStatuses(this.#db);
    } catch {
      // The database is away: the last view stands, and the next read may succeed.
    }
  }

  close(): void {
    clearInterval(this.#timer);
    this.#unsubscribe?.();
  }
}
