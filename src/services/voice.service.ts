import type { Actor } from '../domain/actor.ts';
import type { ConfiguredVoice } from '../domain/configured-voices.ts';
import { isVisible, type ModelAccess } from '../domain/model.ts';
import { AppError, ErrorCode, invalidInput } from '../shared/errors.ts';
import { type Cursors, type Page, pageOf } from '../shared/pagination.ts';

/** A voice as the engine knows it (eSpeak NG's list). */
export interface EngineVoice {
  readonly id: string;
  readonly name: string;
  readonly language: string;
  readonly gender: 'male' | 'female' | null;
}

/** A voice as clients see it (contract `VoiceModel`). */
export interface VoiceModelView {
  readonly voiceModelId: string;
  readonly name: string;
  readonly language: string;
  readonly gender: string | null;
  /** Null for the language's own voice; e.g. "female" for another timbre of it. */
  readonly variant: string | null;
  /**
   * A short sample of the voice, free to download; null for a model server's voice (a sample
   * would be a paid call to it).
   */
  readonly previewMediaId: string | null;
  /** The engine's voice identifier (a model server's own name for a configured voice). */
  readonly engineVoice: string;
  /** The one model a configured voice speaks on; null for the built-in voices. */
  readonly modelId: string | null;
}

const previewPrefix = 'med_voice-';

/**
 * The voices of speech and avatar generation: the built-in engine's, read once, and those that
 * models bring in their configuration (a model server's voices, usable only on their model).
 * IDs are stable and readable (`voc_en-gb`); each built-in voice has a preview, a media ID
 * that any caller may turn into a download URL and that is rendered on first download, at no
 * charge. A configured voice with the ID of a built-in one takes its place. A configured voice of
 * a model private to named accounts exists only for them, as its model does (`isVisible`):
 * others neither see it listed nor learn its ID or its model's.
 */
export class VoiceService {
  readonly #load: () => Promise<readonly EngineVoice[]>;
  #configured: readonly VoiceModelView[] = [];
  /** Models that speak only with their own configured voices. */
  #ownVoices: ReadonlyMap<string, readonly string[]> = new Map();
  /** The access of each configured voice's model, by voiceModelId. */
  #access: ReadonlyMap<string, ModelAccess> = new Map();
  #voices: Promise<ReadonlyMap<string, VoiceModelView>> | undefined;

  readonly #cursors: Cursors;

  constructor(deps: {
    listVoices: () => Promise<readonly EngineVoice[]>;
    cursors: Cursors;
    configured?: readonly ConfiguredVoice[];
  }) {
    this.#load = deps.listVoices;
    this.#cursors = deps.cursors;
    this.replaceConfigured(deps.configured ?? []);
  }

  /** The configured voices of a reloaded catalogue (`models reload`). */
  replaceConfigured(configured: readonly ConfiguredVoice[]): void {
    this.#configured = configured.map((v) => ({
      voiceModelId: v.voiceModelId,
      name: v.name,
      language: v.language,
      gender: v.gender,
      variant: null,
      previewMediaId: null,
      engineVoice: v.voice,
      modelId: v.modelId,
    }));
    const own = new Map<string, string[]>();
    for (const v of this.#configured)
      own.set(v.modelId!, [...(own.get(v.modelId!) ?? []), v.voiceModelId]);
    this.#ownVoices = own;
    this.#access = new Map(configured.map((v) => [v.voiceModelId, v.access]));
    this.#voices = undefined;
  }

  /**
   * The voice, if it speaks on `modelId`: a configured voice only on its model, and a model
   * with configured voices only with those. 140004 when it does not exist for `actor`, 120001
   * otherwise.
   */
  async forModel(
    actor: Actor | null,
    voiceModelId: string,
    modelId: string,
    field = 'voiceModelId',
  ): Promise<VoiceModelView> {
    const voice = await this.getFor(actor, voiceModelId, field);
    const own = this.#ownVoices.get(modelId);
    if (voice.modelId !== null && voice.modelId !== modelId) {
      throw invalidInput([
        { field, message: `${voiceModelId} is a voice of ${voice.modelId}, not of ${modelId}` },
      ]);
    }
    if (voice.modelId === null && own !== undefined) {
      throw invalidInput([
        { field, message: `${modelId} speaks only with its own voices: ${own.join(', ')}` },
      ]);
    }
    return voice;
  }

  /** Voices, optionally of one language: "en" matches en, en-gb, en-us… */
  async list(
    actor: Actor | null,
    language: string | null | undefined,
    first?: number | null,
    after?: string | null,
  ): Promise<Page<VoiceModelView>> {
    const wanted = language?.trim().toLowerCase();
    if (wanted !== undefined && !/^[a-z]{2,3}(-[a-z0-9-]{1,20})?$/.test(wanted)) {
      throw invalidInput([
        { field: 'language', message: 'must be a language tag such as en or en-gb' },
      ]);
    }
    const voices = [...(await this.#all()).values()].filter(
      (v) =>
        this.#visible(v, actor) &&
        (wanted === undefined || v.language === wanted || v.language.startsWith(`${wanted}-`)),
    );
    return pageOf(voices, first, after, this.#cursors.for(actor?.accountId ?? null, 'voices'));
  }

  /** The voice as `actor` may know it: 140004 on `field`, as an unknown one, when it may not. */
  async getFor(
    actor: Actor | null,
    voiceModelId: string,
    field = 'voiceModelId',
  ): Promise<VoiceModelView> {
    const voice = await this.get(voiceModelId, field);
    if (!this.#visible(voice, actor)) throw unknownVoice(voiceModelId, field);
    return voice;
  }

  /**
   * The voice whoever asks, or 140004 on `field`: for the runner, which speaks a task's voice
   * checked at submission. A caller's request goes through {@link getFor}.
   */
  async get(voiceModelId: string, field = 'voiceModelId'): Promise<VoiceModelView> {
    const voice = (await this.#all()).get(voiceModelId);
    if (voice === undefined) throw unknownVoice(voiceModelId, field);
    return voice;
  }

  #visible(voice: VoiceModelView, actor: Actor | null): boolean {
    const access = this.#access.get(voice.voiceModelId);
    return access === undefined || isVisible({ access }, actor);
  }

  /** The voice whose preview `mediaId` is, or undefined when it is not a preview ID. */
  async previewOf(mediaId: string): Promise<VoiceModelView | undefined> {
    if (!mediaId.startsWith(previewPrefix)) return undefined;
    const voice = (await this.#all()).get(`voc_${mediaId.slice(previewPrefix.length)}`);
    // A configured voice that took a built-in one's ID has no preview.
    return voice?.previewMediaId === mediaId ? voice : undefined;
  }

  #all(): Promise<ReadonlyMap<string, VoiceModelView>> {
    this.#voices ??= this.#load().then(
      (voices) =>
        new Map(
          [...voices.flatMap(withVariants), ...this.#configured].map(
            (v) => [v.voiceModelId, v] as const,
          ),
        ),
      (error: unknown) => {
        this.#voices = undefined; // try again next time
        throw error;
      },
    );
    return this.#voices;
  }
}

function unknownVoice(voiceModelId: string, field: string): AppError {
  return new AppError(
    ErrorCode.NotFound,
    `No voice "${voiceModelId}"; listVoiceModels shows the voices.`,
    { field },
  );
}

/**
 * Each language twice: its own voice (eSpeak's, male) and a female variant of it (eSpeak's
 * `+f2`), e.g. `voc_en-gb` and `voc_en-gb-female`.
 */
function withVariants(voice: EngineVoice): VoiceModelView[] {
  const slug = voice.id.toLowerCase().replace(/[^a-z0-9-]+/g, '-');
  const view = (
    suffix: string,
    variant: string | null,
    engineVoice: string,
    gender: string | null,
  ) => ({
    voiceModelId: `voc_${slug}${suffix}`,
    name: variant === null ? voice.name : `${voice.name}, ${variant}`,
    language: voice.language,
    gender,
    variant,
    previewMediaId: `${previewPrefix}${slug}${suffix}`,
    engineVoice,
    modelId: null,
  });
  return [
    view('', null, voice.id, voice.gender),
    view('-female', 'female', `${voice.id}+f2`, 'female'),
  ];
}
