import type { ElementPicture } from '../domain/element.ts';
import { FinishCode } from '../domain/finish-code.ts';
import type { InputLoader } from '../domain/kinds/kind.ts';
import { kindModule } from '../domain/kinds/kinds.ts';
import type { GenerationKind } from '../domain/model.ts';
import type {
  Engine,
  EngineContext,
  EngineFailure,
  EngineRequest,
  EngineResult,
} from '../engines/engine.ts';
import type { Placement } from './placement.ts';

/**
 * Where a task's inputs come from: what its stored settings name, loaded for the engine.
 * Each answers undefined when the input vanished or became unusable since submission (an
 * expected outcome, finished at once with code 4); a throw means "try again later".
 */
export interface EngineInputs {
  /** Pictures of the named elements, in order (own elements deleted since included). */
  elementPictures(elementIds: readonly string[]): Promise<ElementPicture[] | undefined>;
  /** Bytes of media checked at submission. */
  mediaBytes(mediaId: string): Promise<Buffer | undefined>;
  /** The engine's voice behind a `voiceModelId`. */
  engineVoice(voiceModelId: string): Promise<string | undefined>;
  /** The portrait of an avatar of the account (deleted since submission included). */
  avatarPortrait(accountId: string, avatarId: string): Promise<Buffer | undefined>;
}

/** The request, or the rejection of a task whose input is gone. */
export type EngineRequestOutcome =
  | { readonly ok: true; readonly request: EngineRequest }
  | EngineFailure;

/** Thrown inside this module only, to stop loading at the first input that is gone. */
class Gone {
  readonly what: string;
  constructor(what: string) {
    this.what = what;
  }
}

function present<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Gone(what);
  return value;
}

/** The loader a kind module uses for one task: every input gone names itself and its field. */
function loaderFor(accountId: string, inputs: EngineInputs): InputLoader {
  return {
    elementPictures: async (ids, field) =>
      present(await inputs.elementPictures(ids), `An element in ${field} (${ids.join(', ')})`),
    mediaBytes: async (id, field) =>
      present(await inputs.mediaBytes(id), `The media ${id} (${field})`),
    engineVoice: async (id, field) =>
      present(await inputs.engineVoice(id), `The voice ${id} (${field})`),
    avatarPortrait: async (id) =>
      present(await inputs.avatarPortrait(accountId, id), `The portrait of avatar ${id}`),
  };
}

/** The engine request for a stored content input: settings as validated at submission. */
export async function engineRequest(
  task: { readonly taskId: string; readonly accountId: string; readonly kind: GenerationKind },
  input: unknown,
  options: Readonly<Record<string, unknown>>,
  inputs: EngineInputs,
): Promise<EngineRequestOutcome> {
  try {
    const loaded = await kindModule(task.kind).load(input, loaderFor(task.accountId, inputs));
    // The kind's inputs first: none of them can stand in for the request's own fields.
    const request = {
      ...(loaded as object),
      taskId: task.taskId,
      kind: task.kind,
      options,
      settings: input,
    };
    return { ok: true, request: request as EngineRequest };
  } catch (error) {
    if (!(error instanceof Gone)) throw error;
    return {
      ok: false,
      finishCode: FinishCode.RejectedInput,
      message: `${error.what} no longer exists or can no longer be used. Credits were refunded.`,
    };
  }
}

/**
 * Runs a claimed task on its placement's engine. A model gone from the catalogue, or an input
 * gone since submission (code 4), finishes the task without running an engine.
 */
export async function runEngine(
  engines: ReadonlyMap<string, Engine>,
  inputs: EngineInputs,
  run: {
    readonly task: Parameters<typeof engineRequest>[0];
    readonly modelId: string;
    readonly placement: Placement | undefined;
    readonly input: unknown;
  },
  context: EngineContext,
): Promise<EngineResult> {
  const { placement } = run;
  const engine = placement === undefined ? undefined : engines.get(placement.backend.engine);
  if (placement === undefined || engine === undefined) {
    return {
      ok: false,
      finishCode: FinishCode.EngineFailure,
      message: `Model "${run.modelId}" is no longer available.`,
    };
  }
  const loaded = await engineRequest(run.task, run.input, placement.backend.engineOptions, inputs);
  if (!loaded.ok) return loaded;
  return engine.run(loaded.request, context);
}
