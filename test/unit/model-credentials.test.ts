import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

const cwd = mkdtempSync(path.join(tmpdir(), 'atelier-credentials-'));
const model = (modelId: string, engineOptions: Record<string, unknown>) => ({
  modelId,
  name: modelId,
  kind: 'speech',
  engine: 'espeak',
  engineOptions,
  pricing: { unit: 'character', credits: 1 },
  capabilities: { formats: ['mp3'] },
});

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig({ env, cwd });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('credentials of model servers (engineOptions.apiKeyEnv)', () => {
  it('a variable that is not set stops the start, listed with every other problem', () => {
    const problems = problemsOf({
      PORT: 'x',
      MODELS: JSON.stringify([
        model('mdl_a', { apiKeyEnv: 'TTS_KEY' }),
        model('mdl_b', { apiKeyEnv: 'EMPTY_KEY', baseUrl: 'ftp://host/v1' }),
        model('mdl_c', { apiKeyEnv: 'not a name' }),
        model('mdl_d', { baseUrl: 'https://user:sk-secret@api.example/v1' }),
      ]),
      EMPTY_KEY: '',
    });
    assert.deepEqual(
      problems.filter((p) => p.startsWith('MODELS')),
      [
        "MODELS[0] (mdl_a): engineOptions.apiKeyEnv names TTS_KEY, which is not set (the model server's API key)",
        'MODELS[1] (mdl_b): engineOptions.baseUrl must be an http(s) URL without a query',
        "MODELS[1] (mdl_b): engineOptions.apiKeyEnv names EMPTY_KEY, which is not set (the model server's API key)",
        'MODELS[2] (mdl_c): engineOptions.apiKeyEnv must be an environment variable name',
        'MODELS[3] (mdl_d): engineOptions.baseUrl must not hold a user or password; put the key in a variable named by apiKeyEnv',
      ],
    );
    assert.ok(
      problems.some((p) => p.startsWith('PORT')),
      'other problems are listed too',
    );
  });

  it('a set variable is read once, kept out of anything serialised', () => {
    const secret = 'sk-test-0123456789abcdef';
    const config = loadConfig({
      env: {
        MODELS: JSON.stringify([
          model('mdl_a', { apiKeyEnv: 'TTS_KEY', baseUrl: 'http://127.0.0.1:8880/v1' }),
        ]),
        TTS_KEY: secret,
      },
      cwd,
    });
    assert.equal(config.secrets.get('TTS_KEY'), secret);
    assert.ok(!JSON.stringify(config).includes(secret));
    assert.ok(!JSON.stringify(config.models).includes(secret));
  });
});
