import { type AuditActor, commandLine, hangUpSignal } from '../domain/audit.ts';
import type { PoolBackend } from '../domain/backends.ts';
import type { ModelDefinition } from '../domain/model.ts';
import type { Clock } from '../shared/clock.ts';
import { invalidInput } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import { appendAudit } from '../store/audit.store.ts';
import { syncBackends } from '../store/backend.store.ts';
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
   * Reloads from `source`. `announce` is false for a node following another's reload (it
   * must not announce it again). Recorded in the audit log when anything changed.
   */
  async reload(
    source: ModelsSource,
    by: AuditActor = commandLine,
    announce = true,
  ): Promise<ModelsReloaded> {
    const { built, problems } = this.#d.check(source.models);
    if (problems.length > 0) {
      throw invalidInput(problems.map((message) => ({ field: 'MODELS', message })));
    }
    const before = new Map(this.#d.current().map((m) => [m.modelId, JSON.stringify(m)]));
    const after = new Map(built.models.map((m) => [m.modelId, JSON.stringify(m)]));
    const reloaded: ModelsReloaded = {
      models: built.models.length,
      added: [...after.keys()].filter((id) => !before.has(id)),
      removed: [...before.keys()].filter((id) => !after.has(id)),
      changed: [...after]
        .filter(([id, json]) => before.has(id) && before.get(id) !== json)
        .map(([id]) => id),
    };
    const changed = reloaded.added.length + reloaded.removed.length + reloaded.changed.length > 0;
    if (changed) {
      // The backends of models gone are removed too: nothing claims for them any more.
      await syncBackends(
        this.#d.db,
        [...new Set([...before.keys(), ...after.keys()])],
        built.backends,
      );
      this.#d.apply(built, source.secrets);
      if (announce) {
        await appendAudit(this.#d.db, this.#d.clock.now(), by, {
          accountId: null,
          action: 'models.reloaded',
          target: null,
          detail: { added: reloaded.added, removed: reloaded.removed, changed: reloaded.changed },
        });
      }
    } else {
      // Keys may change alone (a rotated provider key under the same variable name).
      this.#d.apply(built, source.secrets);
    }
    if (announce) await this.#d.announce();
    return reloaded;
  }
}
