import type { AccountRole, Actor } from './actor.ts';
import type { BackendDefinition } from './backends.ts';

export type GenerationKind = 'image' | 'video' | 'speech' | 'avatar';
export type ModelStatus = 'ready' | 'maintenance' | 'deprecated';
export type ImageFormat = 'png' | 'jpeg' | 'webp';

/** Who may use a model: everyone, some roles, or named accounts. */
export type ModelAccess =
  | { readonly kind: 'public' }
  | { readonly kind: 'roles'; readonly roles: readonly AccountRole[] }
  | { readonly kind: 'accounts'; readonly accountIds: readonly string[] };

/** One allowed output size; `maxCount` is how many images one submission may ask at it. */
export interface ImageSize {
  readonly width: number;
  readonly height: number;
  readonly aspectRatio: string;
  readonly maxCount: number;
}

/** What an image model accepts, as data: sizes with their ratio and count limits, formats. */
export interface ImageCapabilities {
  /** The first size is the default; the first of a ratio is that ratio's default. */
  readonly sizes: readonly ImageSize[];
  readonly formats: readonly ImageFormat[];
  readonly maxElements: number;
  readonly maxPromptLength: number;
}

/** One output size of a video model and what it allows there: the capability matrix. */
export interface VideoFormat {
  /** e.g. "720p" */
  readonly resolution: string;
  readonly aspectRatio: string;
  readonly width: number;
  readonly height: number;
  /** Frame rates offered at this size; the first is the default. */
  readonly fps: readonly number[];
  readonly minDurationSeconds: number;
  readonly maxDurationSeconds: number;
}

export type VideoMode = 'text' | 'image';

export interface VideoCapabilities {
  /** `text`: a scene from the prompt; `image`: camera motion over `imageMediaId`. */
  readonly modes: readonly VideoMode[];
  /** The first format is the default; the first of a resolution is that resolution's default. */
  readonly formats: readonly VideoFormat[];
  readonly defaultDurationSeconds: number;
  readonly maxElements: number;
  readonly maxPromptLength: number;
}

export type AudioFormat = 'mp3' | 'wav' | 'ogg';

export interface SpeechCapabilities {
  /** The first is the default. */
  readonly formats: readonly AudioFormat[];
  readonly maxTextLength: number;
  /** Multipliers of the voice's normal rate and pitch (1 = normal). */
  readonly speed: { readonly min: number; readonly max: number };
  readonly pitch: { readonly min: number; readonly max: number };
}

export interface AvatarResolution {
  readonly resolution: string;
  readonly width: number;
  readonly height: number;
}

export interface AvatarCapabilities {
  /** The first is the default. */
  readonly resolutions: readonly AvatarResolution[];
  readonly fps: number;
  readonly maxScriptLength: number;
  readonly maxAudioSeconds: number;
  /** How a script's length is priced before it is spoken: characters per second of speech. */
  readonly charactersPerSecond: number;
}

export interface Pricing {
  readonly unit: 'image' | 'second' | 'character' | 'request';
  /** Credits for every `per` units, started units rounded up (e.g. 1 credit per 100 characters). */
  readonly credits: number;
  readonly per: number;
  /** The one category it draws from; null to spend categories in the configured order. */
  readonly category: string | null;
}

interface ModelBase {
  readonly modelId: string;
  readonly name: string;
  readonly status: ModelStatus;
  readonly description: string | null;
  /**
   * The engine that runs it and that engine's options; of a pool, those of its first backend
   * (what the catalogue reads, such as configured voices).
   */
  readonly engine: string;
  readonly engineOptions: Readonly<Record<string, unknown>>;
  /** The backends it runs on, when it lists them; else `engine` alone ({@link poolOf}). */
  readonly backends?: readonly BackendDefinition[];
  readonly access: ModelAccess;
  readonly pricing: Pricing;
  /** Longest one run may take before it is stopped (finish code 3); default per kind. */
  readonly maxRunSeconds?: number;
}

export interface ImageModel extends ModelBase {
  readonly kind: 'image';
  readonly capabilities: ImageCapabilities;
}

export interface VideoModel extends ModelBase {
  readonly kind: 'video';
  readonly capabilities: VideoCapabilities;
}

export interface SpeechModel extends ModelBase {
  readonly kind: 'speech';
  readonly capabilities: SpeechCapabilities;
}

export interface AvatarModel extends ModelBase {
  readonly kind: 'avatar';
  readonly capabilities: AvatarCapabilities;
}

/** A catalogue entry: a model bound to its engines, with its access rule, capabilities and price. */
export type ModelDefinition = ImageModel | VideoModel | SpeechModel | AvatarModel;

export type ModelOfKind<K extends GenerationKind> = Extract<ModelDefinition, { kind: K }>;

/**
 * How long one run of a kind may take when its model sets no `maxRunSeconds`: stills and
 * speech take seconds on a working engine, videos and avatars minutes.
 */
export const defaultMaxRunSeconds: Readonly<Record<GenerationKind, number>> = {
  image: 300, // 5 minutes
  speech: 300, // 5 minutes
  video: 1800, // 30 minutes
  avatar: 1800, // 30 minutes
};

/** The run-time limit of a kind's task, in seconds (the model's, else the kind's default). */
export function maxRunSeconds(kind: GenerationKind, model: ModelDefinition | undefined): number {
  return model?.maxRunSeconds ?? defaultMaxRunSeconds[kind];
}

/** Credits for `quantity` of the model's unit (images, seconds, characters; 1 for a request). */
export function priceOf(model: ModelDefinition, quantity: number): number {
  const units = model.pricing.unit === 'request' ? 1 : quantity;
  return Math.ceil(units / model.pricing.per) * model.pricing.credits;
}

/** Whether the actor's account may use the model (its status aside). */
export function canUse(model: ModelDefinition, actor: Actor): boolean {
  switch (model.access.kind) {
    case 'public':
      return true;
    case 'roles':
      return model.access.roles.includes(actor.role);
    case 'accounts':
      return model.access.accountIds.includes(actor.accountId);
  }
}

/**
 * Whether the model exists for the caller at all. A model restricted to named accounts is
 * private to them: every other account and anonymous callers neither see it listed nor learn
 * its ID exists (it answers like an unknown one). Public and role-restricted models are shown
 * to everyone, {@link canUse} telling who may submit.
 */
export function isVisible(model: Pick<ModelDefinition, 'access'>, actor: Actor | null): boolean {
  return (
    model.access.kind !== 'accounts' ||
    (actor !== null && model.access.accountIds.includes(actor.accountId))
  );
}
