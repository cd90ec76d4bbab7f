import type { AvatarSettings } from '../domain/avatar-settings.ts';
import type { ElementPicture } from '../domain/element.ts';
import { FinishCode } from '../domain/finish-code.ts';
import type { ImageSettings } from '../domain/image-settings.ts';
import type { MediaKind } from '../domain/media.ts';
import type { SpeechSettings } from '../domain/speech-settings.ts';
import type { VideoSettings } from '../domain/video-settings.ts';

interface RequestBase {
  readonly taskId: string;
  /** The model's `engineOptions`. */
  readonly options: Readonly<Record<string, unknown>>;
}

/**
 * What an engine is asked to make: the validated settings of one kind, with the bytes of the
 * media and elements they name already loaded. Remote inference adapters take the same.
 */
export type EngineRequest =
  | (RequestBase & {
      readonly kind: 'image';
      readonly settings: ImageSettings;
      readonly elements: readonly ElementPicture[];
    })
  | (RequestBase & {
      readonly kind: 'video';
      readonly settings: VideoSettings;
      readonly elements: readonly ElementPicture[];
      /** The still to animate in `image` mode. */
      readonly image: Buffer | null;
    })
  | (RequestBase & {
      readonly kind: 'speech';
      readonly settings: SpeechSettings;
      /** The eSpeak NG voice behind `settings.voiceModelId`. */
      readonly voice: string;
    })
  | (RequestBase & {
      readonly kind: 'avatar';
      readonly settings: AvatarSettings;
      readonly portrait: Buffer;
      /** The eSpeak NG voice that speaks `settings.script`; null with an uploaded audio. */
      readonly voice: string | null;
      /** The uploaded audio; null with a script. */
      readonly audio: Buffer | null;
    });

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
  run(request: EngineRequest, context: EngineContext): Promise<EngineResult>;
}

/** The answer of an engine given a kind it does not make: a catalogue mistake, not a retry. */
export function wrongKind(engine: string, kind: string): EngineResult {
  return {
    ok: false,
    finishCode: FinishCode.EngineFailure,
    message: `The ${engine} engine does not make ${kind}.`,
  };
}
