import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { builtinModels } from '../../src/domain/builtin-catalogue.ts';
import type { ModelDefinition } from '../../src/domain/model.ts';
import { Ffmpeg } from '../../src/engines/media/ffmpeg.ts';
import { bindingProblems, builtinEngines } from '../../src/engines/registry.ts';
import { createRemoteDeps } from '../../src/engines/remote/create-remote-deps.ts';
import { fillTemplate } from '../../src/engines/replicate/replicate-template.ts';

// A Replicate model's options are checked at start, every problem listed under the model's id;
// its input template is filled with typed values, and absent ones are left out.
const ffmpeg = Ffmpeg.resolve();
const engines = builtinEngines(
  ffmpeg,
  createRemoteDeps({ secrets: new Map(), ffmpeg, observe: () => {} }),
);
const base = (kind: string) => builtinModels.find((m) => m.kind === kind)!;
const bound = (kind: string, engineOptions: Record<string, unknown>) =>
  ({
    ...base(kind),
    modelId: `mdl_rep-${kind}`,
    engine: 'replicate',
    engineOptions,
  }) as ModelDefinition;
const connection = { apiKeyEnv: 'REPLICATE_API_TOKEN' };

describe('replicate engine options', () => {
  it('a good model of each kind has no problem', () => {
    const models = [
      bound('image', { ...connection, model: 'a/b', input: { prompt: '{{prompt}}' } }),
      bound('video', { ...connection, version: 'c'.repeat(64), input: { p: '{{prompt}}' } }),
      bound('speech', { ...connection, model: 'a/tts', input: { text: '{{text}}' } }),
      bound('avatar', {
        ...connection,
        model: 'a/head',
        input: { face: '{{portrait}}', audio: '{{audio}}' },
      }),
    ];
    assert.deepEqual(bindingProblems(models, engines), []);
  });

  it('lists every problem of a bad model at once', () => {
    const image = bound('image', {
      model: 'not a model',
      baseUrl: 'ftp://example.test',
      pollMs: 0,
      input: { text: '{{text}}', size: '{{widht}}' },
    });
    const avatar = bound('avatar', {
      ...connection,
      model: 'a/head',
      input: { face: '{{portrait}}' },
    });
    const speech = bound('speech', { ...connection, model: 'a/b', version: 'a/b', input: [] });
    assert.deepEqual(bindingProblems([image, avatar, speech], engines), [
      'mdl_rep-image: engineOptions.baseUrl must be an http(s) URL, not "ftp://example.test"',
      'mdl_rep-image: engineOptions.apiKeyEnv must name the variable that holds the API token',
      'mdl_rep-image: engineOptions.model must be "owner/name", not "not a model"',
      'mdl_rep-image: engineOptions.input uses {{text}}, which image models do not have ({{prompt}}, {{negative_prompt}}, {{seed}}, {{width}}, {{height}}, {{aspect_ratio}}, {{count}}, {{format}}, {{image}})',
      'mdl_rep-image: engineOptions.input uses {{widht}}, which image models do not have ({{prompt}}, {{negative_prompt}}, {{seed}}, {{width}}, {{height}}, {{aspect_ratio}}, {{count}}, {{format}}, {{image}})',
      'mdl_rep-image: engineOptions.input must use {{prompt}}',
      'mdl_rep-image: engineOptions.pollMs must be an integer from 10 to 60000',
      'mdl_rep-avatar: engineOptions.input must use {{audio}} or {{text}}',
      'mdl_rep-speech: engineOptions must give either model ("owner/name") or version',
      'mdl_rep-speech: engineOptions.input must be the model input template (an object)',
    ]);
  });

  it('a maxRunSeconds above the default Cancel-After needs cancelAfterSeconds', () => {
    const options = { ...connection, model: 'a/b', input: { prompt: '{{prompt}}' } };
    const long = { ...bound('image', options), maxRunSeconds: 900 } as ModelDefinition;
    const bounded = {
      ...bound('image', { ...options, cancelAfterSeconds: 900 }),
      maxRunSeconds: 900,
    } as ModelDefinition;
    const short = { ...bound('image', options), maxRunSeconds: 120 } as ModelDefinition;
    assert.deepEqual(bindingProblems([long, bounded, short], engines), [
      'mdl_rep-image: engineOptions.cancelAfterSeconds must be set (at least maxRunSeconds, 900) when maxRunSeconds is above the default Cancel-After of 360 seconds',
    ]);
  });
});

describe('filling an input template', () => {
  it('a whole placeholder takes the value and its type; absent values are left out', () => {
    const template = {
      prompt: '{{prompt}}',
      negative_prompt: '{{negative_prompt}}',
      seed: '{{ seed }}',
      size: '{{width}}x{{height}}',
      steps: 4,
      images: ['{{image}}', 'https://example.test/style.png'],
      nested: { caption: 'by Atelier: {{prompt}}', strength: 0.5, go_fast: true },
    };
    const values = {
      prompt: 'a fox',
      negative_prompt: null,
      seed: 7,
      width: 64,
      height: 48,
      image: null,
    };
    assert.deepEqual(fillTemplate(template, values), {
      prompt: 'a fox',
      seed: 7,
      size: '64x48',
      steps: 4,
      images: ['https://example.test/style.png'],
      nested: { caption: 'by Atelier: a fox', strength: 0.5, go_fast: true },
    });
  });
});
