import { type AuditActor, commandLine, hangUpSignal } from '../domain/audit.ts';
import type { PoolBackend } from '../domain/backends.ts';
import type { ModelDefinition } from '../domain/model.ts';
import type { Clock } from '../shared/clock.ts';
import { invalidInput } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { appendAudit } from '../store/audit.store.ts';
import { syncBackends } from '../store/backend.store.ts';
import { recordCatalogue, recordedCatalogue } from '../store/catalogue.store.ts';
import type { Db } from '../store/database.ts';

/** What `MODELS` holds after a reload, and the model servers' keys it names. */
export interface ModelsSource {
  readonly models: readonly ModelDefinition[];
  readonly secrets: ReadonlyMap<string, string>;
}

/** A catalogue checked whole: its models (built-ins included) and their recorded backends. */
export interface BuiltCatalogue {
  readonly models: readonly ModelDefinition[];
  readonly backends: readonly PoolBackend[];
}

/** What a reload changed, by model ID. */
export interface ModelsReloaded {
  readonly models: number;
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly string[];
}

export interface ModelsReloadDeps {
  db: Db;
  clock: Clock;
  /** The catalogue in use. */
  current(): readonly ModelDefinition[];
  /** The problems of binding this catalogue to the engines, every one; none when it is good. */
  check(configured: readonly ModelDefinition[]): { built: BuiltCatalogue; problems: string[] };
  /** Puts a checked catalogue in use in this process. */
  apply(built: BuiltCatalogue, secrets: ReadonlyMap<string, string>): void;
  /** Tells every other node to reload its own `MODELS`. */
  announce(): Promise<void>;
}

/**
 * Models without a restart (issue 32 §4): a new `MODELS` is checked whole (the configuration's
 * own checks ran already: its shape, the keys it names), then put in use, its backends
 * recorded, and every node told to do the same; or nothing changes and every problem is listed
 * (120001, one entry per problem, all on `MODELS`). A run under way keeps the definition it was
 * claimed with; a task still queued runs with the new one, or, its model gone, fails with
 * code 1 and its credits back.
 */
export class ModelsReloadService {
  readonly #d: ModelsReloadDeps;
  /** Reloads run one after another: a SIGHUP and an announcement never interleave. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(deps: ModelsReloadDeps) {
    this.#d = deps;
  }

  /**
   * A reload no caller waits for, its outcome logged: SIGHUP to this process (recorded and
   * announced as such), or another node's announcement (neither). `read` is the configuration
   * read again; one that does not load is logged, and the catalogue in use kept.
   */
  async reloadInBackground(
    read: () => ModelsSource,
    log: Logger,
    trigger: 'SIGHUP' | 'announced',
  ): Promise<void> {
    const said = trigger === 'SIGHUP' ? 'SIGHUP: models' : 'models';
    try {
      const source = read();
      const reloaded =
        trigger === 'SIGHUP'
          ? await this.reload(source, hangUpSignal)
          : await this.reload(source, commandLine, false);
      log.info({ ...reloaded }, `${said} reloaded`);
    } catch (error) {
      log.error({ err: error }, `${said} not reloaded`);
    }
  }

  /**
   * Reloads from `source`, one reload at a time in this process. `announce` is false for a
   * node following another's reload: it must not announce or record it again.
   *
   * What this process uses changes when the new catalogue differs from it (and then the
   * backends' rows are written). What the reload changed for the fleet, printed and recorded
   * in the audit log by the node that announces it, is the difference from the catalogue last
   * recorded (at a start or a reload): the command line on PostgreSQL serves nothing, and read
   * the same file moments before.
   */
  reload(
    source: ModelsSource,
    by: AuditActor = commandLine,
    announce = true,
  ): Promise<ModelsReloaded> {
    const run = this.#queue.then(() => this.#reload(source, by, announce));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #reload(source: ModelsSource, by: AuditActor, announce: boolean): Promise<ModelsReloaded> {
    const { built, problems } = this.#d.check(source.models);
    if (problems.length > 0) {
      throw invalidInput(problems.map((message) => ({ field: 'MODELS', message })));
    }
    const here = this.#d.current();
    const local = differences(here, built.models);
    if (local.added.length + local.removed.length + local.changed.length > 0) {
      // The backends of models gone are removed too: nothing claims for them any more.
      const ids = new Set([...here, ...built.models].map((m) => m.modelId));
      await syncBackends(this.#d.db, [...ids], built.backends);
    }
    // Keys may change alone (a rotated provider key under the same variable name).
    this.#d.apply(built, source.secrets);
    if (!announce) return local;
    const fleet = differences((await recordedCatalogue(this.#d.db)) ?? here, built.models);
    await this.#d.db.transaction().execute(async (trx) => {
      await recordCatalogue(trx, built.models, this.#d.clock.now());
      await appendAudit(trx, this.#d.clock.now(), by, {
        accountId: null,
        action: 'models.reloaded',
        target: null,
        detail: { added: fleet.added, removed: fleet.removed, changed: fleet.changed },
      });
    });
    await this.#d.announce();
    return fleet;
  }
}

/** What `after` adds, removes and changes of `before`, by model ID. */
function differences(
  before: readonly ModelDefinition[],
  after: readonly ModelDefinition[],
): ModelsReloaded {
  const was = new Map(before.map((m) => [m.modelId, canonical(m)]));
  const is = new Map(after.map((m) => [m.modelId, canonical(m)]));
  return {
    models: after.length,
    added: [...is.keys()].filter((id) => !was.has(id)),
    removed: [...was.keys()].filter((id) => !is.has(id)),
    changed: [...is].filter(([id, json]) => was.has(id) && was.get(id) !== json).map(([id]) => id),
  };
}

/** JSON with every object's keys in order: a catalogue read back from jsonb reorders them. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
