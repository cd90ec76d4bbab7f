import type { ModelAccess, ModelDefinition } from './model.ts';

/**
 * A voice a model brings in its configuration (`engineOptions.voices`), for engines that speak
 * with a model server's voices: listed by `listVoiceModels` with the built-in ones, usable only
 * with that model, and sent to the server as `voice`.
 */
export interface ConfiguredVoice {
  readonly modelId: string;
  readonly voiceModelId: string;
  /** The model server's own name for it (OpenAI `voice`, e.g. `alloy`, `af_bella`). */
  readonly voice: string;
  readonly name: string;
  readonly language: string;
  readonly gender: 'male' | 'female' | null;
  /** Its model's access: a voice of a model private to named accounts is private to them too. */
  readonly access: ModelAccess;
}

const voiceModelIdPattern = /^voc_[A-Za-z0-9_-]{1,60}$/;
const languagePattern = /^[a-z]{2,3}(-[a-z0-9-]{1,20})?$/;

/** What is wrong with a model's `engineOptions.voices` (required: at least one voice). */
export function voiceOptionProblems(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0) {
    return [
      'engineOptions.voices must list the voices, e.g. [{"voiceModelId":"voc_alloy","voice":"alloy","name":"Alloy","language":"en"}]',
    ];
  }
  return value.flatMap((entry: unknown, index) => {
    const at = `engineOptions.voices[${index}]`;
    if (typeof entry !== 'object' || entry === null) return [`${at} must be an object`];
    const v = entry as Record<string, unknown>;
    const problems: string[] = [];
    if (typeof v.voiceModelId !== 'string' || !voiceModelIdPattern.test(v.voiceModelId)) {
      problems.push(`${at}.voiceModelId must look like voc_my-voice`);
    }
    if (serverVoiceName(v.voice) === null) {
      problems.push(
        `${at}.voice must name the server's voice (e.g. "alloy"), or be {"id": "voice_…"} for a custom voice`,
      );
    }
    if (typeof v.name !== 'string' || v.name.trim() === '') problems.push(`${at}.name is required`);
    if (typeof v.language !== 'string' || !languagePattern.test(v.language)) {
      problems.push(`${at}.language must be a lower-case language tag such as en or en-gb`);
    }
    if (
      v.gender !== undefined &&
      v.gender !== null &&
      v.gender !== 'male' &&
      v.gender !== 'female'
    ) {
      problems.push(`${at}.gender must be "male", "female" or null`);
    }
    return problems;
  });
}

/**
 * The server's name of a configured voice: the string itself, or the `id` of a custom voice
 * given as `{"id": "voice_…"}` (OpenAI's custom voices are sent in that shape; the engine
 * that speaks such a server finds it among its options). Null when it is neither.
 */
export function serverVoiceName(voice: unknown): string | null {
  if (typeof voice === 'string') return voice.trim() === '' ? null : voice;
  const id = (voice as { id?: unknown } | null)?.id;
  return typeof voice === 'object' && typeof id === 'string' && id.trim() !== '' ? id : null;
}

/** The voices of every model whose options list some (already checked at start). */
export function configuredVoices(models: readonly ModelDefinition[]): ConfiguredVoice[] {
  return models.flatMap((model) => {
    const voices = model.engineOptions.voices;
    if (!Array.isArray(voices) || voiceOptionProblems(voices).length > 0) return [];
    return (voices as Record<string, unknown>[]).map((v) => ({
      modelId: model.modelId,
      voiceModelId: v.voiceModelId as string,
      voice: serverVoiceName(v.voice)!,
      name: v.name as string,
      language: v.language as string,
      gender: v.gender === 'male' || v.gender === 'female' ? v.gender : null,
      access: model.access,
    }));
  });
}

/** Voice IDs given by more than one configured voice: each must name one voice of one model. */
export function duplicateVoiceProblems(voices: readonly ConfiguredVoice[]): string[] {
  const seen = new Map<string, string>();
  const problems: string[] = [];
  for (const voice of voices) {
    const first = seen.get(voice.voiceModelId);
    if (first === undefined) seen.set(voice.voiceModelId, voice.modelId);
    else
      problems.push(`${voice.modelId}: voice ${voice.voiceModelId} is already a voice of ${first}`);
  }
  return problems;
}
