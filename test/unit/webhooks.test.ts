import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  endpointProblems,
  newWebhookSecret,
  nextAttemptAt,
  retryDelaysMs,
  signWebhook,
} from '../../src/domain/webhooks.ts';
import { postPublic, postTargetProblem } from '../../src/shared/public-post.ts';

describe('webhooks (issue 21)', () => {
  it('signs as the standardwebhooks library verifies, one signature per secret', () => {
    const [a, b] = [newWebhookSecret(), newWebhookSecret()];
    const body = JSON.stringify({ type: 'task.finished', data: { taskId: 'tsk_1' } });
    const now = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(now),
      'webhook-signature': signWebhook([a, b], 'msg_1', now, body),
    };
    assert.deepEqual(new Webhook(a).verify(body, headers), JSON.parse(body));
    assert.deepEqual(new Webhook(b).verify(body, headers), JSON.parse(body));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers));
    assert.throws(() => new Webhook(a).verify(`${body} `, headers), 'a changed body fails');
  });

  it('retries back off for about a day, then stop', () => {
    const start = new Date('2026-11-27T00:00:00Z');
    assert.equal(nextAttemptAt(1, start)!.getTime() - start.getTime(), 5_000);
    const total = retryDelaysMs.reduce((sum, d) => sum + d, 0);
    assert.ok(total > 23 * 3_600_000 && total < 25 * 3_600_000, String(total));
    assert.equal(nextAttemptAt(retryDelaysMs.length + 1, start), null);
  });

  it('names every problem of an endpoint as written', () => {
    assert.deepEqual(
      endpointProblems({
        url: 'https://u:p@example.com',
        events: ['task.done'],
        description: 'x'.repeat(201),
      }).map((p) => p.field),
      ['url', 'events[0]', 'description'],
    );
    assert.deepEqual(
      endpointProblems({ url: 'https://example.com/h', events: ['task.failed'] }),
      [],
    );
  });

  it('posts only to public https hosts, checking the addresses a name resolves to', async () => {
    assert.match(postTargetProblem(new URL('http://example.com'), false)!, /https/);
    assert.match(postTargetProblem(new URL('https://192.168.1.2'), false)!, /private/);
    assert.equal(postTargetProblem(new URL('https://example.com'), false), null);
    assert.equal(postTargetProblem(new URL('http://127.0.0.1:9'), true), null);
    assert.match(postTargetProblem(new URL('http://example.com'), true)!, /not this computer/);
    await assert.rejects(
      postPublic(new URL('https://hooks.example.com/x'), {
        headers: {},
        body: '{}',
        timeoutMs: 1_000,
        excerptBytes: 10,
        maxBytes: 100,
        resolveHost: async () => [{ address: '10.1.2.3', family: 4 }],
      }),
      (error: Error & { detail?: string }) =>
        error.message === 'hooks.example.com has no public address' &&
        /10\.1\.2\.3: private/.test(error.detail ?? ''),
    );
  });
});
