import type { AccountRole, Actor } from './actor.ts';

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

export interface Pricing {
  readonly unit: 'image' | 'second' | 'character' | 'request';
  readonly credits: number;
  /** The one category it draws from; null to spend categories in the configured order. */
  readonly category: string | null;
}

/** A catalogue entry: a model bound to an engine, with its access rule and price. */
export interface ModelDefinition {
  readonly modelId: string;
  readonly name: string;
  readonly kind: 'image';
  readonly status: ModelStatus;
  readonly description: string | null;
  /** The engine that runs it and that engine's options. */
  readonly engine: string;
  readonly engineOptions: Readonly<Record<string, unknown>>;
  readonly access: ModelAccess;
  readonly capabilities: ImageCapabilities;
  readonly pricing: Pricing;
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
