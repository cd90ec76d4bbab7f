import type { Engine } from './engine.ts';
import { fakeEngine, noopEngine } from './fake/fake.engine.ts';
import type { Ffmpeg } from './media/ffmpeg.ts';
import { proceduralImageEngine } from './procedural-image/procedural-image.engine.ts';
import { speechEngine } from './speech/speech.engine.ts';
import { talkingPortraitEngine } from './video/avatar.engine.ts';
import { proceduralVideoEngine } from './video/video.engine.ts';

/** The names models may refer to; checked against the catalogue at start. */
export const builtinEngineNames: readonly string[] = [
  'procedural-image',
  'procedural-video',
  'espeak',
  'talking-portrait',
  'fake',
  'noop',
];

/** Engines by name. The media engines share one ffmpeg (binary paths from the configuration). */
export function builtinEngines(ffmpeg: Ffmpeg): ReadonlyMap<string, Engine> {
  const engines = [
    proceduralImageEngine,
    proceduralVideoEngine(ffmpeg),
    speechEngine(ffmpeg),
    talkingPortraitEngine(ffmpeg),
    fakeEngine,
    noopEngine,
  ];
  return new Map(engines.map((engine) => [engine.name, engine]));
}
