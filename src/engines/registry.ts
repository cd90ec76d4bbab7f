import { onBackend, poolOf } from '../domain/backends.ts';
import type { ModelDefinition } from '../domain/model.ts';
import { comfyuiEngine } from './comfyui/comfyui.engine.ts';
import type { Engine } from './engine.ts';
import { fakeEngine, noopEngine } from './fake/fake.engine.ts';
import type { Ffmpeg } from './media/ffmpeg.ts';
import { openaiImagesEngine } from './openai/openai-images.engine.ts';
import { openaiSpeechEngine } from './openai/openai-speech.engine.ts';
import { proceduralImageEngine } from './procedural-image/procedural-image.engine.ts';
import type { RemoteDeps } from './remote/remote-deps.ts';
import { replicateEngine } from './replicate/replicate.engine.ts';
import { speechEngine } from './speech/speech.engine.ts';
import { talkingPortraitEngine } from './video/avatar.engine.ts';
import { proceduralVideoEngine } from './video/video.engine.ts';

/**
 * Engines by name. The media engines share one ffmpeg (binary paths from the configuration);
 * the remote ones share `remote` (credentials, output fetches, metrics, checks).
 */
export function builtinEngines(ffmpeg: Ffmpeg, remote: RemoteDeps): ReadonlyMap<string, Engine> {
  const engines = [
    proceduralImageEngine,
    proceduralVideoEngine(ffmpeg),
    speechEngine(ffmpeg),
    talkingPortraitEngine(ffmpeg),
    openaiImagesEngine(remote),
    openaiSpeechEngine(remote),
    replicateEngine(remote),
    comfyuiEngine(remote),
    fakeEngine,
    noopEngine,
  ];
  return new Map(engines.map((engine) => [engine.name, engine]));
}

/**
 * What is wrong with binding these models to these engines: an engine that does not exist,
 * one that does not make the model's kind, or options the engine cannot use, for every backend
 * of a pool. Every problem is listed; none means all is well.
 */
export function bindingProblems(
  models: readonly ModelDefinition[],
  engines: ReadonlyMap<string, Pick<Engine, 'kinds' | 'checkOptions'>>,
): string[] {
  const names = [...engines.keys()].join(', ');
  return models.flatMap((model) =>
    poolOf(model).flatMap((backend) => {
      const where =
        model.backends === undefined ? model.modelId : `${model.modelId} backend "${backend.name}"`;
      const engine = engines.get(backend.engine);
      if (engine === undefined) {
        return [`${where}: engine "${backend.engine}" does not exist (engines: ${names})`];
      }
      if (!engine.kinds.includes(model.kind)) {
        return [
          `${where}: engine "${backend.engine}" makes ${engine.kinds.join(', ')}, not ${model.kind}`,
        ];
      }
      const problems = engine.checkOptions?.(onBackend(model, backend)) ?? [];
      return problems.map((problem) => `${where}: ${problem}`);
    }),
  );
}
