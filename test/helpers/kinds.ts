import type { ReferenceChecks } from '../../src/domain/kinds/kind.ts';
import { kindModule } from '../../src/domain/kinds/kinds.ts';
import { type ModelDefinition, priceOf } from '../../src/domain/model.ts';

/**
 * References that are all there, unchecked: what the kind's own rules make of validated
 * settings, without a database. `audioMs` is the length of any media the price depends on.
 */
export function presentReferences(audioMs: number | null = null): ReferenceChecks {
  return {
    elements: async () => {},
    media: async () => {},
    mediaDuration: async () => audioMs,
    avatar: async () => ({ voiceModelId: null }),
    voice: async () => {},
  };
}

/** Credits the settings cost under the model, by its kind's resolve and the model's pricing. */
export async function priceOfSettings(
  model: ModelDefinition,
  settings: unknown,
  audioMs: number | null = null,
): Promise<number> {
  const resolved = await kindModule(model.kind).resolve(
    model,
    settings,
    presentReferences(audioMs),
  );
  return priceOf(model, resolved.units);
}
