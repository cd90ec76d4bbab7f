import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  configuredVoices,
  duplicateVoiceProblems,
  voiceOptionProblems,
} from '../../src/domain/configured-voices.ts';
import type { ModelDefinition } from '../../src/domain/model.ts';

const alloy = { voiceModelId: 'voc_alloy', voice: 'alloy', name: 'Alloy', language: 'en' };
const open = { kind: 'public' } as const;
const model = (modelId: string, voices: unknown) =>
  ({ modelId, engineOptions: { voices }, access: open }) as unknown as ModelDefinition;

describe("a model's configured voices (engineOptions.voices)", () => {
  it('names every problem of the list, by position', () => {
    assert.deepEqual(voiceOptionProblems([alloy]), []);
    assert.equal(voiceOptionProblems(undefined).length, 1);
    assert.equal(voiceOptionProblems([]).length, 1);
    assert.deepEqual(
      voiceOptionProblems([
        alloy,
        { voiceModelId: 'alloy', voice: '', name: 'A', language: 'English', gender: 'x' },
      ]),
      [
        'engineOptions.voices[1].voiceModelId must look like voc_my-voice',
        'engineOptions.voices[1].voice must name the server\'s voice (e.g. "alloy"), or be {"id": "voice_…"} for a custom voice',
        'engineOptions.voices[1].language must be a lower-case language tag such as en or en-gb',
        'engineOptions.voices[1].gender must be "male", "female" or null',
      ],
    );
  });

  it('reads the voices of the models that have a valid list, each tied to its model', () => {
    const voices = configuredVoices([model('mdl_a', [alloy]), model('mdl_b', 'nonsense')]);
    assert.deepEqual(voices, [{ modelId: 'mdl_a', ...alloy, gender: null, access: open }]);
  });

  it('one voice ID in two models is a problem: a voice speaks on one model', () => {
    const voices = configuredVoices([model('mdl_a', [alloy]), model('mdl_b', [alloy])]);
    assert.deepEqual(duplicateVoiceProblems(voices), [
      'mdl_b: voice voc_alloy is already a voice of mdl_a',
    ]);
  });
});
