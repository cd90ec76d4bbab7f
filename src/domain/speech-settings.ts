import type { AudioFormat, SpeechModel } from './model.ts';
import { priceOf } from './model.ts';
import { SettingsReader, type Validated } from './settings-input.ts';

/** A validated, complete speech request. */
export interface SpeechSettings {
  readonly text: string;
  readonly voiceModelId: string;
  /** Multiplier of the voice's normal rate (1 = normal). */
  readonly speed: number;
  /** Multiplier of the voice's normal pitch (1 = normal). */
  readonly pitch: number;
  readonly format: AudioFormat;
}

/** Checks a raw speech request against the model; the voice itself is checked by the caller. */
export function validateSpeechSettings(
  model: SpeechModel,
  raw: Readonly<Record<string, unknown>>,
): Validated<SpeechSettings> {
  const caps = model.capabilities;
  const read = new SettingsReader(raw);
  const text = read.text('text', caps.maxTextLength);
  const voiceModelId = read.id('voiceModelId');
  if (voiceModelId === undefined && read.problems.every((p) => p.field !== 'voiceModelId')) {
    read.invalid('voiceModelId', 'is required');
  }
  const speed = read.number('speed', 0.01, 100) ?? 1;
  const pitch = read.number('pitch', 0.01, 100) ?? 1;
  const format = read.string('format')?.toLowerCase() ?? caps.formats[0]!;
  for (const [field, value, range] of [
    ['speed', speed, caps.speed],
    ['pitch', pitch, caps.pitch],
  ] as const) {
    if (value < range.min || value > range.max) {
      read.unsupported(field, `must be from ${range.min} to ${range.max}`, range);
    }
  }
  if (!(caps.formats as readonly string[]).includes(format)) {
    read.unsupported('format', `"${format}" is not offered by this model`, caps.formats);
  }
  return read.result(() => ({
    text,
    voiceModelId: voiceModelId!,
    speed,
    pitch,
    format: format as AudioFormat,
  }));
}

/** Credits a validated request costs: per character of the (trimmed) text. */
export function priceSpeech(model: SpeechModel, settings: SpeechSettings): number {
  return priceOf(model, settings.text.length);
}
