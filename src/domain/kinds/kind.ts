import type { ElementPicture } from '../element.ts';
import type { MediaKind } from '../media.ts';
import type { GenerationKind, ModelOfKind } from '../model.ts';
import type { FieldTable, Validated } from './fields.ts';

/**
 * What a kind's request names, checked against the caller when it is submitted (or estimated).
 * The generation service implements it for one caller and purpose: a submission checks every
 * reference; an estimate checks only what the price depends on and answers the rest unchecked.
 * Each method throws the catalogue error (140004 naming the field, …) for a bad reference.
 */
export interface ReferenceChecks {
  /** The elements exist and the caller may use them (unchecked for an estimate). */
  elements(ids: readonly string[], field: string): Promise<void>;
  /** A media of the caller's account, of that kind (unchecked for an estimate). */
  media(id: string, kind: MediaKind, field: string): Promise<void>;
  /** The length of a media of the caller's that the price depends on (checked for estimates too). */
  mediaDuration(id: string, kind: MediaKind, field: string): Promise<number | null>;
  /** An avatar of the caller's account and its own voice; undefined when not looked up (estimates). */
  avatar(id: string, field: string): Promise<{ readonly voiceModelId: string | null } | undefined>;
  /** The voice exists in the catalogue and speaks on this model (a model's configured voices only on it). */
  voice(id: string, field: string, modelId: string): Promise<void>;
}

/**
 * Where a task's stored references are loaded for its engine. Each method answers the bytes or
 * throws (the job layer turns "gone since submission" into finish code 4, naming the field).
 */
export interface InputLoader {
  /** Pictures of the named elements, in order. */
  elementPictures(ids: readonly string[], field: string): Promise<ElementPicture[]>;
  mediaBytes(id: string, field: string): Promise<Buffer>;
  /** The engine's voice behind a `voiceModelId`. */
  engineVoice(voiceModelId: string, field: string): Promise<string>;
  /** The portrait of an avatar of the task's account. */
  avatarPortrait(avatarId: string, field: string): Promise<Buffer>;
}

/** Settings completed by their references, and what the model's pricing counts for them. */
export interface Resolved<S> {
  readonly settings: S;
  /** Images, seconds or characters: the quantity the model's `pricing.per` divides. */
  readonly units: number;
}

/**
 * One generation kind, declared once: its names on the edges, its input fields, its rules
 * against a model's capabilities, what it references, how it is priced and what its engine is
 * given. GraphQL inputs and mutations, MCP tools and their schemas, cost estimates, the
 * generation service and the engine request are all built from these.
 */
export interface KindModule<K extends GenerationKind, S, L> {
  readonly kind: K;
  /** GraphQL mutation and input type, MCP tool. */
  readonly names: {
    readonly mutation: string;
    readonly inputType: string;
    readonly tool: string;
  };
  /** A short title (MCP tool title). */
  readonly title: string;
  /** What a submission starts, for a tool description: "an image generation". */
  readonly summary: string;
  /** The kind's own input fields, besides `modelId` and `idempotencyKey` (`commonFields`). */
  readonly fields: FieldTable;
  /**
   * Checks a raw request against the model's capabilities and fills in defaults. `randomSeed`
   * gives a seed when none is set, so the stored input reproduces the result.
   */
  validate(
    model: ModelOfKind<K>,
    raw: Readonly<Record<string, unknown>>,
    randomSeed: () => number,
  ): Validated<S>;
  /** Checks what the settings name, completes them, and says how many units they cost. */
  resolve(model: ModelOfKind<K>, settings: S, references: ReferenceChecks): Promise<Resolved<S>>;
  /** Loads what the stored settings name, for the engine. */
  load(settings: S, loader: InputLoader): Promise<L>;
}
