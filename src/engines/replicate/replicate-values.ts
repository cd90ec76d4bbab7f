import type { EngineRequest } from '../engine.ts';
import type { SlotValue } from './replicate-template.ts';

/** A placeholder's value before it is sent: files are still bytes (see replicate-files.ts). */
export type RawValue = SlotValue | Buffer;

/** The placeholder values of one request (see `kindSlots`); loaded files as their bytes. */
export function slotValues(request: EngineRequest): Record<string, RawValue> {
  switch (request.kind) {
    case 'image': {
      const s = request.settings;
      const first = request.elements[0];
      return {
        prompt: s.prompt,
        negative_prompt: s.negativePrompt,
        seed: s.seed,
        width: s.width,
        height: s.height,
        aspect_ratio: s.aspectRatio,
        count: s.count,
        format: s.format,
        image: first?.picture ?? null,
      };
    }
    case 'video': {
      const s = request.settings;
      return {
        prompt: s.prompt,
        seed: s.seed,
        width: s.width,
        height: s.height,
        aspect_ratio: s.aspectRatio,
        resolution: s.resolution,
        duration: s.durationSeconds,
        fps: s.fps,
        image: request.image,
      };
    }
    case 'speech': {
      const s = request.settings;
      return {
        text: s.text,
        voice: request.voice,
        speed: s.speed,
        pitch: s.pitch,
        format: s.format,
      };
    }
    case 'avatar': {
      const s = request.settings;
      return {
        portrait: request.portrait,
        audio: request.audio,
        text: s.script,
        voice: request.voice,
        width: s.width,
        height: s.height,
        resolution: s.resolution,
        fps: s.fps,
      };
    }
  }
}

/**
 * Why this request cannot go to a model with these placeholders, if it cannot: an avatar
 * model fed only by `{{audio}}` has nothing to speak a script with, and the reverse.
 */
export function unfillable(request: EngineRequest, used: ReadonlySet<string>): string | null {
  if (request.kind !== 'avatar') return null;
  if (request.audio !== null && !used.has('audio')) {
    return 'This avatar model speaks a script only: give a script instead of audioMediaId.';
  }
  if (request.settings.script !== null && !used.has('text')) {
    return 'This avatar model animates an uploaded audio only: give audioMediaId instead of a script.';
  }
  return null;
}
