import type { AvatarSettings } from '../domain/avatar-settings.ts';
import type { ElementPicture } from '../domain/element.ts';
import { FinishCode } from '../domain/finish-code.ts';
import type { ImageSettings } from '../domain/image-settings.ts';
import type { GenerationKind } from '../domain/model.ts';
import type { SpeechSettings } from '../domain/speech-settings.ts';
import type { VideoSettings } from '../domain/video-settings.ts';
import type { EngineFailure, EngineRequest } from '../engines/engine.ts';

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

/** The engine request for a stored content input: settings as validated at submission. */
export async function engineRequest(
  task: { readonly taskId: string; readonly accountId: string; readonly kind: GenerationKind },
  input: unknown,
  options: Readonly<Record<string, unknown>>,
  inputs: EngineInputs,
): Promise<EngineRequestOutcome> {
  try {
    return { ok: true, request: await load(task, input, options, inputs) };
  } catch (error) {
    if (!(error instanceof Gone)) throw error;
    return {
      ok: false,
      finishCode: FinishCode.RejectedInput,
      message: `${error.what} no longer exists or can no longer be used. Credits were refunded.`,
    };
  }
}

async function load(
  task: { readonly taskId: string; readonly accountId: string; readonly kind: GenerationKind },
  input: unknown,
  options: Readonly<Record<string, unknown>>,
  inputs: EngineInputs,
): Promise<EngineRequest> {
  const { taskId } = task;
  const elementPictures = async (ids: readonly string[]) =>
    present(await inputs.elementPictures(ids), `An element in elementIds (${ids.join(', ')})`);
  const media = async (id: string | null, field: string) =>
    id === null ? null : present(await inputs.mediaBytes(id), `The media ${id} (${field})`);
  const voice = async (id: string) =>
    present(await inputs.engineVoice(id), `The voice ${id} (voiceModelId)`);
  switch (task.kind) {
    case 'image': {
      const settings = input as ImageSettings;
      const elements = await elementPictures(settings.elementIds);
      return { taskId, kind: 'image', options, settings, elements };
    }
    case 'video': {
      const settings = input as VideoSettings;
      const elements = await elementPictures(settings.elementIds);
      const image = await media(settings.imageMediaId, 'imageMediaId');
      return { taskId, kind: 'video', options, settings, elements, image };
    }
    case 'speech': {
      const settings = input as SpeechSettings;
      return {
        taskId,
        kind: 'speech',
        options,
        settings,
        voice: await voice(settings.voiceModelId),
      };
    }
    case 'avatar': {
      const settings = input as AvatarSettings;
      const portrait = present(
        await inputs.avatarPortrait(task.accountId, settings.avatarId),
        `The portrait of avatar ${settings.avatarId}`,
      );
      const speaker =
        settings.script !== null && settings.voiceModelId !== null
          ? await voice(settings.voiceModelId)
          : null;
      const audio = await media(settings.audioMediaId, 'audioMediaId');
      return { taskId, kind: 'avatar', options, settings, portrait, voice: speaker, audio };
    }
  }
}
