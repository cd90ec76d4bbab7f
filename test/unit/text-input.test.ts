import assert from 'node:assert/strict';
import { it } from 'node:test';
import { findTextProblem, maxJsonNesting, textProblem } from '../../src/shared/text-input.ts';

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

it('finds the first problem in document order: a key before what it holds, then later keys', () => {
  const value = { a: { b: 'x\u0000' }, 'c\u0000': 'y\u0000', d: ['\ud800'] };
  assert.equal(findTextProblem(value, '')?.field, 'a.b');
  assert.equal(
    findTextProblem({ 'k\u0000': { inner: '\u0000' } }, '')?.message,
    'key must not contain the NUL character (U+0000)',
  );
});

it('refuses nesting past 64 levels by its outermost field, whatever the depth, without recursion', () => {
  const nested = (levels: number, leaf: unknown = 1) => {
    let v = leaf;
    for (let i = 0; i < levels; i++) v = i % 2 === 0 ? { a: v } : [v];
    return v;
  };
  assert.equal(findTextProblem({ input: nested(maxJsonNesting - 1) }, ''), null);
  for (const levels of [maxJsonNesting, 10_000, 1_000_000]) {
    assert.deepEqual(findTextProblem({ ok: 1, input: nested(levels) }, ''), {
      field: 'input',
      message: `nests deeper than ${maxJsonNesting} levels`,
    });
  }
  // A path given: the value is that field.
  assert.equal(findTextProblem(nested(100), 'password')?.field, 'password');
  assert.equal(findTextProblem(nested(100), '')?.field, '[0]');
});
