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
  /**
   * What an operator needs and the account must not see (the address of a model server, a
   * driver's error): logged with the run's end, never stored or shown.
   */
  readonly detail?: string;
  /** The HTTP status a model server answered with, when its answer was the failure. */
  readonly providerStatus?: number;
  /**
   * The backend failed rather than the work: no answer, an overloaded or failing server that
   * did not take the job, the job lost on the server. Another backend of the pool may run the
   * task, and the failure counts toward this backend's cooldown.
   */
  readonly backendFault?: boolean;
}

/**
 * An expected outcome is a return value: success with its files, or a failure with a finish
 * code. Throwing means "something unexpected, retry me".
 */
export type EngineResult =
  | { readonly ok: true; readonly outputs: readonly EngineOutput[] }
  | EngineFailure;

/** Why a run was stopped: the reason of its aborted signal, a `RunStopped`. */
export type StopReason = 'cancelled' | 'timeout' | 'lost' | 'shutdown';

/**
 * The abort reason the runner gives. `cancelled` and `timeout` end the task: remote work
 * should be cancelled. `lost` (another worker holds the task now) and `shutdown` (the task goes
 * back to the queue) do not: the next attempt may resume the remote job, so leave it running.
 */
export class RunStopped extends Error {
  readonly reason: StopReason;
  constructor(reason: StopReason) {
    super(`task ${reason}`);
    this.name = 'RunStopped';
    this.reason = reason;
  }
}

/** Whether a stopped run's task is over, so remote work it started should be cancelled. */
export function stopEndsTask(signal: AbortSignal): boolean {
  const reason: unknown = signal.reason;
  return (
    !(reason instanceof RunStopped) || reason.reason === 'cancelled' || reason.reason === 'timeout'
  );
}

/**
 * A note an engine keeps with its task across attempts, e.g. the id of the job it started at
 * a provider, so an attempt after a lost lease or a crash resumes that job instead of starting
 * (and paying for) another.
 */
export interface TaskCheckpoint {
  /** The note as the last attempt left it, null if none was written. */
  readonly saved: string | null;
  /** Writes the note; rejects when the task is no longer this worker's (lease lost). */
  save(checkpoint: string): Promise<void>;
}

export interface EngineContext {
  /**
   * Aborted on cancellation, lease loss, its deadline or shutdown, with a `RunStopped` reason;
   * an engine stops as soon as it can.
   */
  readonly signal: AbortSignal;
  /** Progress from 0 to 1. */
  reportProgress(progress: number): void;
  /** Where a remote engine remembers its job; absent outside the task runner. */
  readonly checkpoint?: TaskCheckpoint;
}

export interface Engine {
  readonly name: string;
  /** The kinds it makes; a model of another kind bound to it is refused at start. */
  readonly kinds: readonly GenerationKind[];
  run(request: EngineRequest, context: EngineContext): Promise<EngineResult>;
  /**
   * Whether the model server a backend's options name answers, for the backend's health:
   * resolves when it does, rejects with the reason when not. Engines that run on the worker
   * itself have none, and no health is kept for them.
   */
  probe?(options: Readonly<Record<string, unknown>>, signal: AbortSignal): Promise<void>;
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
