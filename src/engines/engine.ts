import { FinishCode } from '../domain/finish-code.ts';
import type { InputsOf, SettingsOf } from '../domain/kinds/kinds.ts';
import type { MediaKind } from '../domain/media.ts';
import type { GenerationKind, ModelDefinition } from '../domain/model.ts';

interface RequestBase {
  readonly taskId: string;
  /** The model's `engineOptions`. */
  readonly options: Readonly<Record<string, unknown>>;
}

/**
 * What an engine is asked to make: the validated settings of one kind, with the bytes of the
 * media and elements they name already loaded (the kind module says which). Remote inference
 * adapters take the same.
 */
export type EngineRequest = {
  [K in GenerationKind]: RequestBase & {
    readonly kind: K;
    readonly settings: SettingsOf<K>;
  } & InputsOf<K>;
}[GenerationKind];

/** One produced file. */
export interface EngineOutput {
  readonly kind: MediaKind;
  readonly mimeType: string;
  readonly extension: string;
  readonly bytes: Buffer;
  readonly width?: number;
  readonly height?: number;
  readonly durationMs?: number;
}

/** An expected failure: a finish code (engine failure, rejected input) and a readable reason. */
export interface EngineFailure {
  readonly ok: false;
  readonly finishCode: FinishCode;
  readonly message: string;
}

/**
 * An expected outcome is a return value: success with its files, or a failure with a finish
 * code. Throwing means "something unexpected, retry me".
 */
export type EngineResult =
  | { readonly ok: true; readonly outputs: readonly EngineOutput[] }
  | EngineFailure;

export interface EngineContext {
  /** Aborted on cancellation, lease loss, its deadline or shutdown; an engine stops as soon as it can. */
  readonly signal: AbortSignal;
  /** Progress from 0 to 1. */
  reportProgress(progress: number): void;
}

export interface Engine {
  readonly name: string;
  /** The kinds it makes; a model of another kind bound to it is refused at start. */
  readonly kinds: readonly GenerationKind[];
  run(request: EngineRequest, context: EngineContext): Promise<EngineResult>;
  /**
   * What is wrong with a model's `engineOptions` for this engine (a missing `baseUrl`, a voice
   * without a name…), each problem a readable sentence; listed with every other at start.
   */
  checkOptions?(model: ModelDefinition): string[];
}

/** The answer of an engine given a kind it does not make: a catalogue mistake, not a retry. */
export function wrongKind(engine: string, kind: string): EngineResult {
  return {
    ok: false,
    finishCode: FinishCode.EngineFailure,
    message: `The ${engine} engine does not make ${kind}.`,
  };
}
