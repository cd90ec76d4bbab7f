import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashInput, optionalKey, optionalMaxCredits } from '../../src/services/submission-input.ts';
import { AppError, ErrorCode } from '../../src/shared/errors.ts';

/** Asserts `fn` throws 120001 naming `field`. */
function refuses(fn: () => unknown, field: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof AppError);
    assert.equal(error.code, ErrorCode.InvalidInput);
    assert.equal(error.details.field, field);
    return true;
  });
}

describe('a submission’s input hash (what tells a retry from a conflict)', () => {
  const input = { modelId: 'mdl_a', prompt: 'a fox', size: { width: 64, height: 64 } };

  it('is the same whatever the key order, with nulls left out', () => {
    const reordered = { size: { height: 64, width: 64 }, prompt: 'a fox', modelId: 'mdl_a' };
    assert.equal(hashInput(reordered), hashInput(input));
    assert.equal(hashInput({ ...input, seed: null, negativePrompt: undefined }), hashInput(input));
  });

  it('ignores the fields about the request: a retry may change its key, cap and webhook', () => {
    const retried = {
      ...input,
      idempotencyKey: 'k2',
      maxCredits: 9,
      webhookUrl: 'https://a.example/',
    };
    assert.equal(hashInput(retried), hashInput({ ...input, idempotencyKey: 'k1' }));
  });

  it('differs when the generation differs, nested values and list order included', () => {
    assert.notEqual(hashInput({ ...input, prompt: 'a cat' }), hashInput(input));
    assert.notEqual(hashInput({ ...input, size: { width: 64, height: 32 } }), hashInput(input));
    assert.notEqual(
      hashInput({ ...input, elementIds: ['e1', 'e2'] }),
      hashInput({ ...input, elementIds: ['e2', 'e1'] }),
    );
  });
});

describe('a submission’s own fields', () => {
  it('an idempotency key is 1 to 200 characters, or absent', () => {
    assert.equal(optionalKey(undefined), null);
    assert.equal(optionalKey(null), null);
    assert.equal(optionalKey('k'.repeat(200)), 'k'.repeat(200));
    refuses(() => optionalKey(''), 'idempotencyKey');
    refuses(() => optionalKey('k'.repeat(201)), 'idempotencyKey');
    refuses(() => optionalKey(7), 'idempotencyKey');
  });

  it('a credit cap is a whole number from 0, or absent', () => {
    assert.equal(optionalMaxCredits(undefined), null);
    assert.equal(optionalMaxCredits(0), 0);
    assert.equal(optionalMaxCredits(12), 12);
    refuses(() => optionalMaxCredits(-1), 'maxCredits');
    refuses(() => optionalMaxCredits(1.5), 'maxCredits');
    refuses(() => optionalMaxCredits('3'), 'maxCredits');
  });
});
