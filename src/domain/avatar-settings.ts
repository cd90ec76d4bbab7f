import type { AvatarModel } from './model.ts';
import { priceOf } from './model.ts';
import { SettingsReader, type Validated } from './settings-input.ts';

/** A validated talking-avatar request. Exactly one of `script` and `audioMediaId` is set. */
export interface AvatarSettings {
  readonly avatarId: string;
  readonly script: string | null;
  /** The voice that speaks the script: the given one, else the avatar's (filled in by the caller). */
  readonly voiceModelId: string | null;
  readonly audioMediaId: string | null;
  readonly resolution: string;
  readonly width: number;
  readonly height: number;
  readonly fps: number;
}

/** Checks a raw avatar request against the model; the avatar, voice and audio are checked by the caller. */
export function validateAvatarSettings(
  model: AvatarModel,
  raw: Readonly<Record<string, unknown>>,
): Validated<AvatarSettings> {
  const caps = model.capabilities;
  const read = new SettingsReader(raw);
  const avatarId = read.id('avatarId');
  if (avatarId === undefined && read.problems.every((p) => p.field !== 'avatarId')) {
    read.invalid('avatarId', 'is required');
  }
  const givenScript = read.string('script');
  const audioMediaId = read.id('audioMediaId') ?? null;
  const voiceModelId = read.id('voiceModelId') ?? null;
  let script: string | null = null;
  if ((givenScript === undefined) === (audioMediaId === null)) {
    read.invalid('script', 'give either a script or an audioMediaId');
  } else if (givenScript !== undefined) {
    script = read.text('script', caps.maxScriptLength);
  } else if (voiceModelId !== null) {
    read.invalid('voiceModelId', 'only speaks a script; an uploaded audio has its own voice');
  }
  const resolutionName = read.string('resolution');
  const resolution =
    resolutionName === undefined
      ? caps.resolutions[0]
      : caps.resolutions.find((r) => r.resolution === resolutionName);
  if (resolution === undefined) {
    read.unsupported(
      'resolution',
      `"${resolutionName}" is not offered by this model`,
      caps.resolutions.map((r) => r.resolution),
    );
  }
  return read.result(() => ({
    avatarId: avatarId!,
    script,
    voiceModelId,
    audioMediaId,
    resolution: resolution!.resolution,
    width: resolution!.width,
    height: resolution!.height,
    fps: caps.fps,
  }));
}

/**
 * Seconds a request is priced for: an uploaded audio's length, or a script's estimated spoken
 * length (the model's characters per second), whole seconds rounded up — after 100 ms of
 * grace, so an encoder's padding (MP3 adds ~50 ms) does not cost a second.
 */
const audioGraceMs = 100;

export function avatarSeconds(
  model: AvatarModel,
  settings: AvatarSettings,
  audioDurationMs: number | null,
): number {
  if (settings.script !== null) {
    return Math.max(1, Math.ceil(settings.script.length / model.capabilities.charactersPerSecond));
  }
  return Math.max(1, Math.ceil(((audioDurationMs ?? 0) - audioGraceMs) / 1000));
}

export function priceAvatar(model: AvatarModel, seconds: number): number {
  return priceOf(model, seconds);
}
