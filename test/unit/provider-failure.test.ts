import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FinishCode } from '../../src/domain/finish-code.ts';
import {
  providerFailure,
  readProviderError,
  redact,
  remoteFailure,
} from '../../src/engines/remote/provider-failure.ts';

const key = 'sk-proj-Abc123Def456Ghi789';

function answer(status: number, body: unknown): Response {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Response(text, { status, headers: { 'content-type': 'application/json' } });
}

describe('redacting credentials from what a provider says', () => {
  it('removes every configured secret, wherever it appears', () => {
    assert.equal(
      redact(`key ${key} and again ${key}.`, [key]),
      'key [redacted] and again [redacted].',
    );
  });

  it('masks key-like and bearer text even when the provider altered the key', () => {
    const said = 'Incorrect API key provided: sk-proj-****************i789. Bearer abc.def';
    const out = redact(said, [key]);
    assert.doesNotMatch(out, /i789|abc\.def/);
    assert.match(out, /Incorrect API key provided: \[redacted\]/);
  });

  it('masks a Replicate token echoed in part, even when it is not the one configured', () => {
    const said = 'Invalid token r8_Zx81****************Qp (check REPLICATE_API_TOKEN)';
    assert.equal(redact(said, []), 'Invalid token [redacted] (check REPLICATE_API_TOKEN)');
  });

  it('takes out a configured key echoed truncated, upper-cased, base64- or URL-encoded', () => {
    const secret = 'op3r4t0r-K3y/With+Symbols=';
    for (const echo of [
      `The key ${secret.slice(0, 12)}… is malformed`,
      `THE KEY ${secret.toUpperCase()} IS MALFORMED`,
      `key=${Buffer.from(secret).toString('base64')}`,
      `key=${Buffer.from(secret).toString('base64url')}`,
      `GET /v1?key=${encodeURIComponent(secret)}`,
      `…${secret.slice(-9)}`,
    ]) {
      const out = redact(echo, [secret]);
      assert.match(out, /\[redacted\]/, echo);
      for (let i = 0; i + 8 <= secret.length; i++) {
        assert.ok(
          !out.toLowerCase().includes(secret.slice(i, i + 8).toLowerCase()),
          `${echo} → ${out}`,
        );
      }
    }
  });

  it('leaves ordinary text alone', () => {
    assert.equal(
      redact('Rate limit reached for requests', [key]),
      'Rate limit reached for requests',
    );
  });
});

describe('a provider error becomes a finish: its class for the account, its words for the log', () => {
  it('a content-policy refusal is rejected input (4)', async () => {
    for (const error of [
      {
        message: 'Your request was rejected by the safety system.',
        type: 'image_generation_user_error',
        code: 'moderation_blocked',
      },
      {
        message: 'Rejected as a result of our safety system.',
        type: 'invalid_request_error',
        code: 'content_policy_violation',
      },
    ]) {
      const failure = providerFailure(
        'OpenAI',
        await readProviderError(answer(400, { error: error })),
        [key],
      );
      assert.equal(failure.finishCode, FinishCode.RejectedInput);
      assert.equal(
        failure.message,
        'The model server refused this input under its content policy. Credits were refunded.',
      );
      assert.match(failure.detail!, /safety system/);
    }
  });

  it('any other answer is an engine failure (1); status, code and words go to the log only', async () => {
    const error = {
      message: `Incorrect API key provided: ${key}. Contact gpu-7.corp.internal.`,
      type: 'invalid_request_error',
      code: 'invalid_api_key',
      param: null,
    };
    const failure = providerFailure('OpenAI', await readProviderError(answer(401, { error })), [
      key,
    ]);
    assert.equal(failure.finishCode, FinishCode.EngineFailure);
    assert.equal(failure.message, 'The model server failed. Credits were refunded.');
    assert.match(
      failure.detail!,
      /HTTP 401 \(invalid_api_key\): Incorrect API key provided: \[redacted\]\. Contact gpu-7/,
    );
    assert.ok(!failure.detail!.includes(key));
  });

  it('every class has its own words, none of them the provider’s', () => {
    const classes = [
      'refused',
      'rejected',
      'failed',
      'unreachable',
      'unusable',
      'interrupted',
    ] as const;
    const messages = classes.map((c) => remoteFailure(c, 'the provider said something').message);
    assert.equal(new Set(messages).size, classes.length);
    for (const message of messages) {
      assert.doesNotMatch(message, /provider said|\.\./);
      assert.match(message, /Credits were refunded\.$/);
    }
  });

  it('reads a body that is not the envelope: plain text, or nothing', async () => {
    const plain = await readProviderError(answer(502, 'Bad gateway from the proxy'));
    assert.deepEqual(plain, {
      status: 502,
      message: 'Bad gateway from the proxy',
      type: null,
      code: null,
    });
    const empty = await readProviderError(
      new Response(null, { status: 503, statusText: 'Service Unavailable' }),
    );
    assert.equal(empty.message, 'Service Unavailable');
    const shaped = await readProviderError(answer(400, { error: 'model not loaded' }));
    assert.equal(shaped.message, 'model not loaded');
  });
});
