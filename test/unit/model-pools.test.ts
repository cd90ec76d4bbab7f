import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { catalogueModels } from '../../src/catalogue.ts';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { defaultHealthRule, poolOf } from '../../src/domain/backends.ts';
import { Ffmpeg } from '../../src/engines/media/ffmpeg.ts';
import { builtinEngines } from '../../src/engines/registry.ts';
import { createRemoteDeps } from '../../src/engines/remote/create-remote-deps.ts';

// Issue 31 §1: a model is a pool of backends, each checked at start with every problem listed.
const cwd = mkdtempSync(path.join(tmpdir(), 'atelier-pools-'));
const ffmpeg = Ffmpeg.resolve();
const engines = builtinEngines(
  ffmpeg,
  createRemoteDeps({ secrets: new Map(), ffmpeg, observe: () => {} }),
);

const imageModel = (fields: Record<string, unknown>) => ({
  modelId: 'mdl_fleet',
  name: 'Fleet',
  kind: 'image',
  pricing: { unit: 'image', credits: 1 },
  capabilities: {
    sizes: [{ width: 64, height: 64, aspectRatio: '1:1', maxCount: 1 }],
    formats: ['png'],
  },
  ...fields,
});
const comfy = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  engine: 'comfyui',
  engineOptions: {
    baseUrl: `http://${name}.internal:8188`,
    workflow: { '1': { class_type: 'SaveImage', inputs: { filename_prefix: '{{prompt}}' } } },
  },
  ...extra,
});

function problemsOf(models: unknown[], env: Record<string, string> = {}): readonly string[] {
  try {
    const config = loadConfig({ env: { ...env, MODELS: JSON.stringify(models) }, cwd });
    catalogueModels(config, engines);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('a model as a pool of backends (issue 31 §1)', () => {
  it('reads backends with their defaults; the first stands as the model’s engine', () => {
    const config = loadConfig({
      env: {
        MODELS: JSON.stringify([
          imageModel({
            backends: [
              { name: 'sketch-a', engine: 'procedural-image', maxConcurrent: 2 },
              {
                name: 'sketch-b',
                engine: 'procedural-image',
                engineOptions: { detail: 2 },
                priority: 2,
                weight: 3,
                health: { cooldownSeconds: 5 },
              },
            ],
          }),
        ]),
      },
      cwd,
    });
    const [model] = config.models;
    assert.equal(model!.engine, 'procedural-image');
    assert.deepEqual(
      poolOf(model!).map(({ id, maxConcurrent, priority, weight, health, engineOptions }) => ({
        id,
        maxConcurrent,
        priority,
        weight,
        health,
        engineOptions,
      })),
      [
        {
          id: 'mdl_fleet/sketch-a',
          maxConcurrent: 2,
          priority: 1,
          weight: 1,
          health: defaultHealthRule,
          engineOptions: {},
        },
        {
          id: 'mdl_fleet/sketch-b',
          maxConcurrent: null,
          priority: 2,
          weight: 3,
          health: { ...defaultHealthRule, cooldownSeconds: 5 },
          engineOptions: { detail: 2 },
        },
      ],
    );
  });

  it('a model with one engine is a pool of one without a cap, named after the engine', () => {
    const config = loadConfig({
      env: { MODELS: JSON.stringify([imageModel({ engine: 'procedural-image' })]) },
      cwd,
    });
    const pool = poolOf(config.models[0]!);
    assert.deepEqual(
      pool.map((b) => [b.id, b.engine, b.maxConcurrent, b.priority]),
      [['mdl_fleet/procedural-image', 'procedural-image', null, 1]],
    );
  });

  it('refuses engine with backends, neither, and two backends of one name, quoting only what is wrong', () => {
    const problems = problemsOf([
      imageModel({ engine: 'procedural-image', backends: [comfy('a')] }),
      imageModel({ modelId: 'mdl_none' }),
      imageModel({ modelId: 'mdl_twice', backends: [comfy('a'), comfy('a'), comfy('b')] }),
      imageModel({ modelId: 'mdl_bad', backends: [{ ...comfy('a b'), maxConcurrent: 0 }] }),
    ]);
    assert.deepEqual(problems, [
      'MODELS[0].engine: give engine or backends, not both (got "procedural-image")',
      'MODELS[1].engine: required (or a list of backends)',
      'MODELS[2].backends[1].name: "a" names another backend of this model (got "a")',
      'MODELS[3].backends[0].name: up to 40 letters, digits, ".", "_" or "-" (got "a b")',
      'MODELS[3].backends[0].maxConcurrent: Too small: expected number to be >=1 (got 0)',
    ]);
  });

  it('checks every backend: its engine, the kind it makes, its options and its key', () => {
    const problems = problemsOf([
      imageModel({
        backends: [
          comfy('box-1'),
          { name: 'talker', engine: 'espeak' },
          { name: 'gone', engine: 'dall-e' },
          { name: 'empty', engine: 'comfyui', engineOptions: { baseUrl: 'http://x:8188' } },
        ],
      }),
    ]);
    assert.deepEqual(problems.slice(0, 2), [
      'MODELS: mdl_fleet backend "talker": engine "espeak" makes speech, not image',
      `MODELS: mdl_fleet backend "gone": engine "dall-e" does not exist (engines: ${[...engines.keys()].join(', ')})`,
    ]);
    assert.ok(
      problems.slice(2).length > 0 &&
        problems.slice(2).every((p) => p.startsWith('MODELS: mdl_fleet backend "empty": ')),
      problems.join('\n'),
    );

    const keys = problemsOf(
      [
        imageModel({
          backends: [
            {
              ...comfy('box-1'),
              engineOptions: { ...comfy('box-1').engineOptions, apiKeyEnv: 'K1' },
            },
            {
              ...comfy('box-2'),
              engineOptions: { ...comfy('box-2').engineOptions, apiKeyEnv: 'K2' },
            },
          ],
        }),
      ],
      { K1: 'set' },
    );
    assert.deepEqual(keys, [
      "MODELS[0].backends[1] (mdl_fleet/box-2): engineOptions.apiKeyEnv names K2, which is not set (the model server's API key)",
    ]);
  });
});
