import assert from 'node:assert/strict';
import { it } from 'node:test';
import { findTextProblem, textProblem } from '../../src/shared/text-input.ts';

it('refuses NUL and unpaired surrogates, and nothing else', () => {
  for (const ok of ['', 'a kite', 'ünïcødé', '日本語', 'emoji 😀 pair', 'tab\tnew\nline'])
    assert.equal(textProblem(ok), null, JSON.stringify(ok));
  for (const bad of ['a\u0000b', '\u0000', 'lone \ud800 high', 'lone \udc00 low', '😀'.slice(0, 1)])
    assert.notEqual(textProblem(bad), null, JSON.stringify(bad));
});

it('names the path of the first bad string or key, through objects and arrays', () => {
  const cases: Array<[unknown, string | null]> = [
    [{ input: { prompt: 'fine', negativePrompt: 'x\u0000' } }, 'input.negativePrompt'],
    [{ input: { elementIds: ['a', 'b', '\ud800'] } }, 'input.elementIds[2]'],
    [{ filter: { 'bad\u0000key': 1 } }, 'filter.bad\uFFFDkey'],
    [{ n: 1, b: true, z: null, list: [1, 2], bytes: Buffer.from([0]) }, null],
  ];
  for (const [value, field] of cases)
    assert.equal(findTextProblem(value, '')?.field ?? null, field, JSON.stringify(field));
});
