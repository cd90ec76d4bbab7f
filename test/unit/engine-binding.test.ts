import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { catalogueModels } from '../../src/catalogue.ts';
import { loadConfig } from '../../src/config/config.ts';
import { builtinModels } from '../../src/domain/builtin-catalogue.ts';
import { Ffmpeg } from '../../src/engines/media/ffmpeg.ts';
import { bindingProblems, builtinEngines } from '../../src/engines/registry.ts';
import { createRemoteDeps } from '../../src/engines/remote/create-remote-deps.ts';

// A model runs on an engine that makes its kind, or the service does not start.
const ffmpeg = Ffmpeg.resolve();
const remote = createRemoteDeps({ secrets: new Map(), ffmpeg, observe: () => {} });
const engines = builtinEngines(ffmpeg, remote);
const cwd = mkdtempSync(path.join(tmpdir(), 'atelier-binding-'));
const sketch = builtinModels.find((m) => m.modelId === 'mdl_atelier-sketch')!;

describe('binding models to engines', () => {
  it('every built-in model runs on a built-in engine that makes its kind', () => {
    assert.deepEqual(bindingProblems(builtinModels, engines), []);
  });

  it('names each model bound to an engine that does not make its kind, or does not exist', () => {
    const models = [
      { ...sketch, modelId: 'mdl_spoken-picture', engine: 'espeak' },
      { ...sketch, modelId: 'mdl_elsewhere', engine: 'dall-e' },
    ];
    assert.deepEqual(bindingProblems(models, engines), [
      'mdl_spoken-picture: engine "espeak" makes speech, not image',
      `mdl_elsewhere: engine "dall-e" does not exist (engines: ${[...engines.keys()].join(', ')})`,
    ]);
  });

  it("lists what an engine finds wrong in a model's options, under the model's id", () => {
    const picky = {
      kinds: ['image' as const],
      checkOptions: (m: { engineOptions: Readonly<Record<string, unknown>> }) =>
        m.engineOptions.baseUrl === undefined ? ['engineOptions.baseUrl is required'] : [],
    };
    const models = [
      { ...sketch, modelId: 'mdl_no-url', engine: 'picky' },
      { ...sketch, modelId: 'mdl_url', engine: 'picky', engineOptions: { baseUrl: 'http://x/v1' } },
    ];
    assert.deepEqual(bindingProblems(models, new Map([['picky', picky]])), [
      'mdl_no-url: engineOptions.baseUrl is required',
    ]);
  });

  it('a configured model on the wrong engine stops the start with every problem listed', () => {
    const model = (id: string, engine: string) => ({
      modelId: id,
      name: id,
      kind: 'image',
      engine,
      pricing: { unit: 'image', credits: 1 },
      capabilities: {
        sizes: [{ width: 64, height: 64, aspectRatio: '1:1', maxCount: 1 }],
        formats: ['png'],
      },
    });
    const env = {
      MODELS: JSON.stringify([model('mdl_a', 'espeak'), model('mdl_b', 'talking-portrait')]),
    };
    assert.throws(
      () => catalogueModels(loadConfig({ env, cwd }), engines),
      (error: Error) =>
        /mdl_a: engine "espeak" makes speech, not image/.test(error.message) &&
        /mdl_b: engine "talking-portrait" makes avatar, not image/.test(error.message),
    );
    const fine = { MODELS: JSON.stringify([model('mdl_c', 'procedural-image')]) };
    assert.ok(
      catalogueModels(loadConfig({ env: fine, cwd }), engines).some((m) => m.modelId === 'mdl_c'),
    );
  });
});

describe('openai-images options against the model family (issue 30 §4)', () => {
  const imageModel = (
    model: string,
    engineOptions: Record<string, unknown>,
    formats = ['png'],
  ) => ({
    ...sketch,
    modelId: `mdl_${model}`,
    engine: 'openai-images',
    engineOptions: { baseUrl: 'https://api.openai.com/v1', model, ...engineOptions },
    capabilities: { ...sketch.capabilities, maxElements: 0, formats },
  });

  it('takes the gpt-image-1 model of docs/engine-openai.md and dall-e models with no extra option', () => {
    const models = [
      imageModel('gpt-image-1', {}, ['png', 'jpeg', 'webp']),
      imageModel('dall-e-3', {}),
      imageModel('local-sd', {}, ['png', 'jpeg']),
    ];
    assert.deepEqual(bindingProblems(models as never, engines), []);
  });

  it('refuses at start what OpenAI would refuse on every task', () => {
    const models = [
      imageModel('gpt-image-1', { responseFormat: 'b64_json' }),
      imageModel('dall-e-2', { outputFormat: true }),
      imageModel('dall-e-3', {}, ['png', 'jpeg']),
    ];
    assert.deepEqual(bindingProblems(models as never, engines), [
      'mdl_gpt-image-1: gpt-image-1 answers base64 and refuses response_format: leave engineOptions.responseFormat out',
      'mdl_dall-e-2: dall-e-2 has no output_format: leave engineOptions.outputFormat out',
      'mdl_dall-e-3: dall-e-3 answers PNG only: capabilities.formats must be ["png"]',
    ]);
  });
});

describe('ComfyUI versions that read /interrupt’s prompt_id (issue 30 §4)', () => {
  it('only servers newer than 0.3.56; an unknown version is taken as older', async () => {
    const { targetsInterrupts } = await import('../../src/engines/comfyui/comfyui-api.ts');
    for (const [version, targeted] of [
      ['0.3.57', true],
      ['v0.3.64', true],
      ['0.4.0', true],
      ['1.0.0', true],
      ['0.3.56', false],
      ['0.3.44', false],
      ['0.2.99', false],
      ['nightly', false],
      [null, false],
    ] as const) {
      assert.equal(targetsInterrupts(version), targeted, String(version));
    }
  });
});

describe('openai-speech options (issue 30 §4)', () => {
  const voiceModel = (model: string, maxTextLength: number, voice: unknown = 'alloy') => ({
    modelId: `mdl_${model}`,
    name: model,
    kind: 'speech' as const,
    engine: 'openai-speech',
    engineOptions: {
      baseUrl: 'https://api.openai.com/v1',
      model,
      voices: [{ voiceModelId: 'voc_v', voice, name: 'V', language: 'en' }],
    },
    capabilities: {
      formats: ['mp3'],
      maxTextLength,
      speed: { min: 0.25, max: 4 },
      pitch: { min: 1, max: 1 },
    },
  });

  it('refuses a text longer than OpenAI’s speech models take, not another server’s', () => {
    const models = [
      voiceModel('tts-1', 4096),
      voiceModel('gpt-4o-mini-tts', 20_000),
      voiceModel('kokoro', 20_000),
      voiceModel('tts-1-hd', 5000, { id: 'voice_1234' }),
    ];
    assert.deepEqual(bindingProblems(models as never, engines), [
      'mdl_gpt-4o-mini-tts: gpt-4o-mini-tts takes at most 4096 characters: set capabilities.maxTextLength to 4096 or less (it is 20000)',
      'mdl_tts-1-hd: tts-1-hd takes at most 4096 characters: set capabilities.maxTextLength to 4096 or less (it is 5000)',
    ]);
  });

  it('takes a custom voice as {"id": …}, and refuses any other shape', () => {
    assert.deepEqual(
      bindingProblems([voiceModel('tts-1', 4096, { id: 'voice_1234' })] as never, engines),
      [],
    );
    const [problem] = bindingProblems([voiceModel('tts-1', 4096, { name: 'x' })] as never, engines);
    assert.match(problem!, /voice must name the server's voice .* or be \{"id": "voice_…"\}/);
  });
});
