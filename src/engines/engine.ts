import type { ElementKind } from '../domain/element.ts';
import type { ImageSettings } from '../domain/image-settings.ts';
import type { MediaKind } from '../domain/media.ts';

/** What an engine is asked to make. Remote inference adapters implement the same interface. */
export interface EngineRequest {
  readonly taskId: string;
  readonly kind: 'image';
  readonly settings: ImageSettings;
  /** The model's `engineOptions`. */
  readonly options: Readonly<Record<string, unknown>>;
  /** Pictures of the elements named in the request (SVG or raster bytes), in order. */
  readonly elements: readonly { readonly kind: ElementKind; readonly picture: Buffer }[];
}

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

/**
 * An expected outcome is a return value: success with its files, or a failure with a finish
 * code (1 engine failure, 4 rejected input). Throwing means "something unexpected, retry me".
 */
export type EngineResult =
  | { readonly ok: true; readonly outputs: readonly EngineOutput[] }
  | { readonly ok: false; readonly finishCode: number; readonly message: string };

export interface EngineContext {
  /** Aborted on cancellation, lease loss or shutdown; an engine stops as soon as it can. */
  readonly signal: AbortSignal;
  /** Progress from 0 to 1. */
  reportProgress(progress: number): void;
}

export interface Engine {
  readonly name: string;
  run(request: EngineRequest, context: EngineContext): Promise<EngineResult>;
}
