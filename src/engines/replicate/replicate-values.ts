import type { EngineRequest } from '../engine.ts';
import type { SlotValue } from './replicate-template.ts';

/**
 * The placeholder values of one request (see `kindSlots`). Loaded files become `data:` URIs,
 * which every Replicate file input accepts (protocol doc, "Files and file inputs").
 */
export function slotValues(request: EngineRequest): Record<string, SlotValue> {
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
        image: first === undefined ? null : dataUri(first.picture),
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
        image: request.image === null ? null : dataUri(request.image),
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
        portrait: dataUri(request.portrait),
        audio: request.audio === null ? null : dataUri(request.audio),
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

/** `data:<type>;base64,…`, the type read from the bytes' signature. */
export function dataUri(bytes: Buffer): string {
  return `data:${sniffType(bytes)};base64,${bytes.toString('base64')}`;
}

function sniffType(bytes: Buffer): string {
  const ascii = (start: number, end: number) => bytes.subarray(start, end).toString('latin1');
  if (bytes[0] === 0x89 && ascii(1, 4) === 'PNG') return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return 'image/jpeg';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return 'audio/wav';
  if (ascii(0, 3) === 'ID3' || (bytes[0] === 0xff && ((bytes[1] ?? 0) & 0xe0) === 0xe0)) {
    return 'audio/mpeg';
  }
  if (ascii(0, 4) === 'OggS') return 'audio/ogg';
  if (ascii(0, 4) === 'fLaC') return 'audio/flac';
  return 'application/octet-stream';
}
