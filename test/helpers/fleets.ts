import { sql } from 'kysely';
import type { Db } from '../../src/store/database.ts';
import { imageWorkflow } from './comfyui-models.ts';
import { imageModel as replicateImageModel } from './replicate.ts';
import type { ComfyStandin } from './standins/comfyui.ts';
import type { ReplicateStandin } from './standins/replicate.ts';

/** An image model (64x48, 3 credits an image) whose backends are `backends` (issue 31). */
export function fleetModel(modelId: string, backends: unknown[]) {
  return {
    modelId,
    name: modelId,
    kind: 'image',
    backends,
    capabilities: {
      sizes: [{ width: 64, height: 48, aspectRatio: '4:3', maxCount: 2 }],
      formats: ['png'],
    },
    pricing: { unit: 'image', credits: 3, category: null },
  };
}

/** A backend on a ComfyUI box (the protocol stand-in) running the SDXL test workflow. */
export function comfyBackend(
  name: string,
  box: ComfyStandin,
  fields: Record<string, unknown> = {},
) {
  return {
    name,
    engine: 'comfyui',
    engineOptions: { baseUrl: box.url, workflow: imageWorkflow() },
    maxConcurrent: 1,
    ...fields,
  };
}

/** A backend on the Replicate stand-in's flux-schnell. */
export function replicateBackend(
  name: string,
  standin: ReplicateStandin,
  fields: Record<string, unknown> = {},
) {
  return {
    name,
    engine: 'replicate',
    engineOptions: replicateImageModel(standin, 'mdl_unused').engineOptions,
    ...fields,
  };
}

/** How a task's runs went, from the database: each run's backend and outcome, in order. */
export async function attemptsOf(
  db: Db,
  taskId: string,
): Promise<Array<{ backend: string; outcome: string }>> {
  const rows = await db
    .selectFrom('task_attempts')
    .select(['backend_id', 'outcome'])
    .where('task_id', '=', taskId)
    .orderBy('attempt')
    .execute();
  return rows.map((r) => ({ backend: r.backend_id, outcome: r.outcome }));
}

/**
 * Backends that ever ran more at once than their cap, from the recorded runs: for each run's
 * start, the runs of the same backend under way at that moment (the database's own times).
 * Empty when every cap held.
 */
export async function capsExceeded(db: Db): Promise<string[]> {
  const { rows } = await sql<{ backend_id: string; at_once: number; cap: number }>`
    SELECT a.backend_id, count(*)::int AS at_once, b.max_concurrent AS cap
    FROM task_attempts a
    JOIN task_attempts o ON o.backend_id = a.backend_id
      AND o.started_at <= a.started_at AND o.ended_at > a.started_at
    JOIN backends b ON b.id = a.backend_id
    WHERE b.max_concurrent IS NOT NULL
    GROUP BY a.backend_id, a.task_id, a.attempt, b.max_concurrent
    HAVING count(*) > b.max_concurrent`.execute(db);
  return rows.map((r) => `${r.backend_id}: ${r.at_once} at once, cap ${r.cap}`);
}
