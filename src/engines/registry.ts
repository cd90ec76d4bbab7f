import type { ModelDefinition } from '../domain/model.ts';
import type { Engine } from './engine.ts';
import { fakeEngine, noopEngine } from './fake/fake.engine.ts';
import type { Ffmpeg } from './media/ffmpeg.ts';
import { proceduralImageEngine } from './procedural-image/procedural-image.engine.ts';
import { speechEngine } from './speech/speech.engine.ts';
import { talkingPortraitEngine } from './video/avatar.engine.ts';
import { proceduralVideoEngine } from './video/video.engine.ts';

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

/**
 * What is wrong with binding these models to these engines: an engine that does not exist, or
 * one that does not make the model's kind. Every problem is listed; none means all is well.
 */
export function bindingProblems(
  models: readonly ModelDefinition[],
  engines: ReadonlyMap<string, Pick<Engine, 'kinds'>>,
): string[] {
  const names = [...engines.keys()].join(', ');
  return models.flatMap((model) => {
    const engine = engines.get(model.engine);
    if (engine === undefined) {
      return [`${model.modelId}: engine "${model.engine}" does not exist (engines: ${names})`];
    }
    if (!engine.kinds.includes(model.kind)) {
      return [
        `${model.modelId}: engine "${model.engine}" makes ${engine.kinds.join(', ')}, not ${model.kind}`,
      ];
    }
    return [];
  });
}
