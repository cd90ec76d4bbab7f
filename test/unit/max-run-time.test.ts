import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { builtinModels } from '../../src/domain/builtin-catalogue.ts';
import { defaultMaxRunSeconds, maxRunSeconds } from '../../src/domain/model.ts';
import { fakeModel } from '../helpers/generation.ts';

const cwd = '/srv/atelier';
const withLimit = (limit: unknown) =>
  JSON.stringify([fakeModel('mdl_limited', {}, { maxRunSeconds: limit })]);

describe('maximum run time of a model', () => {
  it('defaults per kind: seconds-long kinds get minutes, videos and avatars longer', () => {
    assert.ok(defaultMaxRunSeconds.image <= 600 && defaultMaxRunSeconds.speech <= 600);
    assert.ok(defaultMaxRunSeconds.video > defaultMaxRunSeconds.image);
    assert.ok(defaultMaxRunSeconds.avatar > defaultMaxRunSeconds.speech);
    for (const model of builtinModels)
      assert.equal(maxRunSeconds(model.kind, model), defaultMaxRunSeconds[model.kind]);
    assert.equal(maxRunSeconds('video', undefined), defaultMaxRunSeconds.video, 'model gone');
  });

  it('is settable per model in MODELS', () => {
    const [model] = loadConfig({ env: { MODELS: withLimit(90) }, cwd }).models;
    assert.equal(model?.maxRunSeconds, 90);
    assert.equal(maxRunSeconds('image', model), 90);
  });

  it('refuses a limit that is not a whole number of seconds from 1 to 7 days', () => {
    for (const bad of [0, -5, 1.5, 604_801, '60']) {
      assert.throws(
        () => loadConfig({ env: { MODELS: withLimit(bad) }, cwd }),
        (error: unknown) => error instanceof ConfigError && /maxRunSeconds/.test(error.message),
        String(bad),
      );
    }
  });
});
