import type { AudioFormat, SpeechModel } from '../model.ts';
import { type FieldTable, SettingsReader } from './fields.ts';
import type { KindModule } from './kind.ts';

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

/** What the engine is given besides the settings. */
export interface SpeechInputs {
  /** The engine's voice behind `settings.voiceModelId`. */
  readonly voice: string;
}

const fields = {
  voiceModelId: { type: 'id', required: true, description: 'A voice, from the voice list.' },
  text: { type: 'string', required: true, description: 'What is said.' },
  speed: { type: 'float', min: 0.01, max: 100, description: '1 is normal.' },
  pitch: { type: 'float', min: 0.01, max: 100, description: '1 is normal.' },
  format: { type: 'string', description: 'One of the model’s formats (mp3, wav, ogg).' },
} as const satisfies FieldTable;

/** Checks a raw speech request against the model; the voice itself is a reference. */
export function validateSpeech(model: SpeechModel, raw: Readonly<Record<string, unknown>>) {
  const caps = model.capabilities;
  const read = new SettingsReader(raw, fields);
  const text = read.text('text', caps.maxTextLength);
  const voiceModelId = read.requiredId('voiceModelId');
  const speed = read.number('speed') ?? 1;
  const pitch = read.number('pitch') ?? 1;
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
  return read.result<SpeechSettings>(() => ({
    text,
    voiceModelId: voiceModelId!,
    speed,
    pitch,
    format: format as AudioFormat,
  }));
}

/** Speech: priced per character of the (trimmed) text. */
export const speechKind: KindModule<'speech', SpeechSettings, SpeechInputs> = {
  kind: 'speech',
  names: { mutation: 'generateSpeech', inputType: 'GenerateSpeechInput', tool: 'generate_speech' },
  title: 'Generate speech',
  summary: 'a speech generation (text spoken by a voice from the voice models)',
  fields,
  validate: validateSpeech,
  async resolve(model, settings, references) {
    await references.voice(settings.voiceModelId, 'voiceModelId', model.modelId);
    return { settings, units: settings.text.length };
  },
  async load(settings, loader) {
    return { voice: await loader.engineVoice(settings.voiceModelId, 'voiceModelId') };
  },
};
