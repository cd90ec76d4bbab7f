import type { GenerationKind } from '../model.ts';
import { avatarKind } from './avatar.kind.ts';
import { commonFields, type FieldSpec, type FieldTable } from './fields.ts';
import { imageKind } from './image.kind.ts';
import type { KindModule } from './kind.ts';
import { speechKind } from './speech.kind.ts';
import { videoKind } from './video.kind.ts';

/**
 * Every generation kind, by name: the one list the edges, the generation service, the job
 * runner and the catalogue are built from. A new kind is a module and a line here.
 */
export const generationKinds = {
  image: imageKind,
  video: videoKind,
  speech: speechKind,
  avatar: avatarKind,
} as const satisfies { readonly [K in GenerationKind]: KindModule<K, unknown, unknown> };

type Modules = typeof generationKinds;

/** A kind's validated settings: what is stored on the content and given to its engine. */
export type SettingsOf<K extends GenerationKind> =
  Modules[K] extends KindModule<K, infer S, unknown> ? S : never;

/** What a kind's engine is given besides its settings (loaded references). */
export type InputsOf<K extends GenerationKind> =
  Modules[K] extends KindModule<K, unknown, infer L> ? L : never;

/** Any kind's module, for code that works the same for every kind. */
export type AnyKindModule = Modules[GenerationKind];

/** The kinds in the order edges list them (image, video, speech, avatar). */
export const kindModules: readonly AnyKindModule[] = Object.values(generationKinds);

export const kindNames = Object.keys(generationKinds) as GenerationKind[];

/**
 * A kind's module. Its methods take the model and settings of that kind; callers that hold a
 * kind only at run time (a stored task) use this with values of the same kind.
 */
export function kindModule(kind: GenerationKind): KindModule<GenerationKind, unknown, unknown> {
  return generationKinds[kind] as unknown as KindModule<GenerationKind, unknown, unknown>;
}

/** Every input field of a kind as the edges show it: the model, the kind's own, the key. */
export function inputFieldsOf(kind: GenerationKind): FieldTable {
  const { modelId, idempotencyKey, maxCredits, webhookUrl } = commonFields;
  return { modelId, ...generationKinds[kind].fields, idempotencyKey, maxCredits, webhookUrl };
}

/**
 * The fields of every kind together, for an estimate that names its kind among its arguments:
 * each optional but the model, no idempotency key or price cap (an estimate creates nothing). Kinds that
 * share a field name declare it with the same type; where their descriptions differ, each
 * kind's is given ("image: … speech: …").
 */
export function fieldsOfAnyKind(): FieldTable {
  const byName = new Map<string, { kind: GenerationKind; spec: FieldSpec }[]>();
  for (const kind of kindNames) {
    for (const [name, spec] of Object.entries(inputFieldsOf(kind))) {
      if (!['idempotencyKey', 'maxCredits', 'webhookUrl'].includes(name))
        byName.set(name, [...(byName.get(name) ?? []), { kind, spec }]);
    }
  }
  return Object.fromEntries(
    [...byName].map(([name, declared]) => {
      const first = declared[0]!.spec;
      const other = declared.find(({ spec }) => spec.type !== first.type);
      if (other !== undefined) {
        throw new Error(
          `Field ${name} is ${first.type} in one kind, ${other.spec.type} in ${other.kind}.`,
        );
      }
      const texts = new Set(declared.map(({ spec }) => spec.description));
      const description =
        texts.size === 1
          ? first.description
          : declared.map(({ kind, spec }) => `${kind}: ${spec.description ?? ''}`).join(' ');
      const required = name === 'modelId';
      return [name, { ...first, required, description }];
    }),
  );
}

/** The defaults of a kind's fields: what a left-out field means. */
export function defaultsOf(kind: GenerationKind): Readonly<Record<string, number>> {
  return Object.fromEntries(
    Object.entries(generationKinds[kind].fields).flatMap(([name, spec]) =>
      'default' in spec && spec.default !== undefined ? [[name, spec.default]] : [],
    ),
  );
}
