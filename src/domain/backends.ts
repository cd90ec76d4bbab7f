import type { ModelDefinition } from './model.ts';

// A model is a pool of backends (DESIGN.md, "Fleets"): each an engine with its options, a
// capacity Atelier holds for it, a priority tier and a weight. A model configured with one
// `engine` is a pool of one, without a cap.

/** When a backend is taken out of rotation and how it comes back. */
export interface HealthRule {
  /** Retryable failures in a row (runs or probes) that put the backend into cooldown. */
  readonly failuresBeforeCooldown: number;
  /** How long a backend stays out before it is probed (or, without a probe, tried) again. */
  readonly cooldownSeconds: number;
  /** How often a backend in rotation is probed; 0 for never (only runs count). */
  readonly probeSeconds: number;
}

export const defaultHealthRule: HealthRule = {
  failuresBeforeCooldown: 3,
  cooldownSeconds: 30,
  probeSeconds: 30,
};

export interface BackendDefinition {
  /** Unique within its model; the model's ID and this make the backend's ID (`mdl_x/box-1`). */
  readonly name: string;
  readonly engine: string;
  readonly engineOptions: Readonly<Record<string, unknown>>;
  /** Runs at once on it, across every worker and node; null for no cap. */
  readonly maxConcurrent: number | null;
  /** Its tier: a tier is used only while every backend of the tiers before it is full or out. */
  readonly priority: number;
  /** Its share of the runs among free backends of its tier. */
  readonly weight: number;
  readonly health: HealthRule;
}

/** A configured backend, with the ID its slots and health are kept under. */
export interface PoolBackend extends BackendDefinition {
  readonly id: string;
  readonly modelId: string;
}

/** The ID of a model's backend, as stored and as shown (`/readyz`, metrics, the log). */
export function backendId(modelId: string, name: string): string {
  return `${modelId}/${name}`;
}

/**
 * The model's backends: those it lists, or its one `engine` as a pool of one without a cap
 * (named after the engine).
 */
export function poolOf(model: ModelDefinition): readonly PoolBackend[] {
  const listed = model.backends ?? [
    {
      name: model.engine,
      engine: model.engine,
      engineOptions: model.engineOptions,
      maxConcurrent: null,
      priority: 1,
      weight: 1,
      health: defaultHealthRule,
    },
  ];
  return listed.map((b) => ({
    ...b,
    id: backendId(model.modelId, b.name),
    modelId: model.modelId,
  }));
}

/** The model as one backend runs it: that backend's engine and options in the model's place. */
export function onBackend(model: ModelDefinition, backend: BackendDefinition): ModelDefinition {
  return { ...model, engine: backend.engine, engineOptions: backend.engineOptions };
}

/** A backend as operators see it: its health, its runs now, its pool's queue. */
export interface BackendState {
  readonly id: string;
  readonly modelId: string;
  readonly name: string;
  readonly engine: string;
  readonly state: 'up' | 'down';
  readonly failures: number;
  readonly maxConcurrent: number | null;
  readonly priority: number;
  readonly weight: number;
  readonly inFlight: number;
  /** Tasks queued for its model (its pool's, shared by the pool's backends). */
  readonly queued: number;
  readonly downUntil: Date | null;
  readonly lastError: string | null;
  readonly changedAt: Date;
}
