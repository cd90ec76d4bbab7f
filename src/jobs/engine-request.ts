import type { AvatarSettings } from '../domain/avatar-settings.ts';
import type { ElementPicture } from '../domain/element.ts';
import type { ImageSettings } from '../domain/image-settings.ts';
import type { GenerationKind } from '../domain/model.ts';
import type { SpeechSettings } from '../domain/speech-settings.ts';
import type { VideoSettings } from '../domain/video-settings.ts';
import type { EngineRequest } from '../engines/engine.ts';

/** Where a task's inputs come from: what its stored settings name, loaded for the engine. */
export interface EngineInputs {
  /** Pictures of the named elements, in order (own elements deleted since included). */
  elementPictures(elementIds: readonly string[]): Promise<ElementPicture[]>;
  /** Bytes of media checked at submission. */
  mediaBytes(mediaId: string): Promise<Buffer>;
  /** The engine's voice behind a `voiceModelId`. */
  engineVoice(voiceModelId: string): Promise<string>;
  /** The portrait of an avatar of the account (deleted since submission included). */
  avatarPortrait(accountId: string, avatarId: string): Promise<Buffer>;
}

/** The engine request for a stored content input: settings as validated at submission. */
export async function engineRequest(
  task: { readonly taskId: string; readonly accountId: string; readonly kind: GenerationKind },
  input: unknown,
  options: Readonly<Record<string, unknown>>,
  inputs: EngineInputs,
): Promise<EngineRequest> {
  const { taskId } = task;
  switch (task.kind) {
    case 'image': {
      const settings = input as ImageSettings;
      const elements = await inputs.elementPictures(settings.elementIds);
      return { taskId, kind: 'image', options, settings, elements };
    }
    case 'video': {
      const settings = input as VideoSettings;
      const elements = await inputs.elementPictures(settings.elementIds);
      const image =
        settings.imageMediaId === null ? null : await inputs.mediaBytes(settings.imageMediaId);
      return { taskId, kind: 'video', options, settings, elements, image };
    }
    case 'speech': {
      const settings = input as SpeechSettings;
      const voice = await inputs.engineVoice(settings.voiceModelId);
      return { taskId, kind: 'speech', options, settings, voice };
    }
    case 'avatar': {
      const settings = input as AvatarSettings;
      const portrait = await inputs.avatarPortrait(task.accountId, settings.avatarId);
      const voice =
        settings.script !== null && settings.voiceModelId !== null
          ? await inputs.engineVoice(settings.voiceModelId)
          : null;
      const audio =
        settings.audioMediaId === null ? null : await inputs.mediaBytes(settings.audioMediaId);
      return { taskId, kind: 'avatar', options, settings, portrait, voice, audio };
    }
  }
}
