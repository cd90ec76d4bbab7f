import type { Engine } from './engine.ts';
import { fakeEngine, noopEngine } from './fake/fake.engine.ts';
import { proceduralImageEngine } from './procedural-image/procedural-image.engine.ts';

/** Engines by the name models refer to; checked against the catalogue at start. */
export const builtinEngines: ReadonlyMap<string, Engine> = new Map(
  [proceduralImageEngine, fakeEngine, noopEngine].map((engine) => [engine.name, engine]),
);
