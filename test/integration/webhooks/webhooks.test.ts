import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type TestApp, TestClock, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { generateImage, submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { type SeededAccount, seedAccount } from '../../helpers/seed.ts';
import { startWebhookReceiver, verifyWebhook } from '../../helpers/webhook-receiver.ts';

// Signed webhooks (issue 21), received by a real HTTP server on 127.0.0.1 (the development
// switch WEBHOOK_ALLOW_LOCALHOST admits it) and verified with the `standardwebhooks` library.
// Retry times move on the clock port.

const createEndpoint = `mutation C($input: CreateWebhookEndpointInput!) {
  createWebhookEndpoint(input: $input) { secret endpoint { id url events enabled } }
}`;
const deliveries = `query D($id: ID!) { listWebhookDeliveries(endpointId: $id) {
  id eventType state payload attempts { statusCode latencyMs error responseExcerpt }
} }`;

interface Delivery {
  id: string;
  eventType: string;
  state: string;
  payload: { type: string; data: Record<string, unknown> };
  attempts: { statusCode: number | null; latencyMs: number; error: string | null }[];
}

describeEachBackend('signed webhooks (issue 21)', (backend) => {
  let t: TestApp;
  const clock = new TestClock();
  withTestApp(
    backend,
    { clock, env: { MODELS: testModels, WEBHOOK_ALLOW_LOCALHOST: 'true' } },
    (started) => {
      ({ t } = started);
    },
  );

  async function endpoint(owner: SeededAccount, url: string, events: string[]) {
    const res = await graphql<{
      createWebhookEndpoint: { secret: string; endpoint: { id: string } };
    }>(t.url, {
      query: createEndpoint,
      variables: { input: { url, events } },
      apiKey: owner.apiKey,
    });
    assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
    return res.body.data!.createWebhookEndpoint;
  }

  async function logOf(owner: SeededAccount, endpointId: string): Promise<Delivery[]> {
    const res = await graphql<{ listWebhookDeliveries: Delivery[] }>(t.url, {
      query: deliveries,
      variables: { id: endpointId },
      apiKey: owner.apiKey,
    });
    assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
    return res.body.data!.listWebhookDeliveries;
  }

  /** Polls the delivery log, as an account would, until `holds`. */
  async function logUntil(owner: SeededAccount, id: string, holds: (log: Delivery[]) => boolean) {
    for (let i = 0; i < 300; i++) {
      const log = await logOf(owner, id);
      if (holds(log)) return log;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail(`the delivery log never matched: ${JSON.stringify(await logOf(owner, id))}`);
  }

  it('a finished task is delivered once, signed, with IDs and no download URL', async (test) => {
    const owner = await seedAccount(t.app);
    const receiver = await startWebhookReceiver();
    test.after(() => receiver.close());
    const { secret, endpoint: created } = await endpoint(owner, receiver.url, ['task_finished']);
    assert.match(secret, /^whsec_/);
    const { taskId, contentId } = await submitOk(t.url, owner.apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'a hook',
    });
    const [request] = await receiver.received(1);
    const body = verifyWebhook(secret, request!, clock) as {
      type: string;
      data: Record<string, unknown>;
    };
    assert.equal(body.type, 'task.finished');
    assert.deepEqual(
      { taskId: body.data.taskId, contentId: body.data.contentId, code: body.data.finishCode },
      { taskId, contentId, code: 0 },
    );
    assert.doesNotMatch(request!.body, /https?:\/\//, 'no URL that could outlive the event');
    const [logged] = await logUntil(owner, created.id, (log) => log[0]?.state === 'delivered');
    assert.equal(logged!.id, request!.headers['webhook-id']);
    assert.equal(logged!.attempts.length, 1);
    assert.equal(logged!.attempts[0]!.statusCode, 200);

    // A failed task goes only to endpoints that asked for task_failed.
    const failures = await startWebhookReceiver();
    test.after(() => failures.close());
    const failed = await endpoint(owner, failures.url, ['task_failed']);
    const bad = await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fail', prompt: 'no' });
    const [failure] = await failures.received(1);
    const event = verifyWebhook(failed.secret, failure!, clock) as {
      type: string;
      data: { taskId: string };
    };
    assert.deepEqual([event.type, event.data.taskId], ['task.failed', bad.taskId]);
    await waitForTask(t.url, owner.apiKey, bad.taskId);
    assert.equal(receiver.requests.length, 1, 'the task_finished endpoint got no failure');
  });

  it('a receiver that is down gets the same message again on the backoff schedule', async (test) => {
    const owner = await seedAccount(t.app);
    const receiver = await startWebhookReceiver();
    test.after(() => receiver.close());
    receiver.answers.push(503, 503);
    const { secret, endpoint: created } = await endpoint(owner, receiver.url, ['task_finished']);
    await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt: 'outage' });
    await receiver.received(1);
    await logUntil(
      owner,
      created.id,
      (log) => log[0]?.attempts.length === 1 && log[0].state === 'pending',
    );
    clock.advance(5_000); // the first retry is due 5 s after the first attempt
    test.after(() => clock.advance(-35_000));
    await receiver.received(2);
    await logUntil(owner, created.id, (log) => log[0]?.attempts.length === 2);
    clock.advance(30_000); // then 30 s
    const requests = await receiver.received(3);
    const ids = new Set(requests.map((r) => r.headers['webhook-id']));
    assert.equal(ids.size, 1, 'one message, three attempts');
    for (const r of requests) verifyWebhook(secret, r!, clock);
    const [logged] = await logUntil(owner, created.id, (log) => log[0]?.state === 'delivered');
    assert.deepEqual(
      logged!.attempts.map((a) => a.statusCode),
      [503, 503, 200],
    );
  });

  it('after a rotation both secrets sign for a day, then only the new one', async (test) => {
    const owner = await seedAccount(t.app);
    const receiver = await startWebhookReceiver();
    test.after(() => receiver.close());
    const { secret: old, endpoint: created } = await endpoint(owner, receiver.url, [
      'task_finished',
    ]);
    const rotated = await graphql<{ rotateWebhookSecret: { secret: string } }>(t.url, {
      query: 'mutation R($id: ID!) { rotateWebhookSecret(endpointId: $id) { secret } }',
      variables: { id: created.id },
      apiKey: owner.apiKey,
    });
    const fresh = rotated.body.data!.rotateWebhookSecret.secret;
    assert.notEqual(fresh, old);
    await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt: 'during grace' });
    const [during] = await receiver.received(1);
    verifyWebhook(old, during!, clock);
    verifyWebhook(fresh, during!, clock);

    clock.advance(25 * 3_600_000);
    try {
      await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt: 'after grace' });
      const after = (await receiver.received(2))[1]!;
      verifyWebhook(fresh, after, clock);
      assert.throws(() => verifyWebhook(old, after, clock), /No matching signature/);
    } finally {
      clock.advance(-25 * 3_600_000);
    }
  });

  it('a delivery, or everything since a time, is sent again with the same webhook-id', async (test) => {
    const owner = await seedAccount(t.app);
    const receiver = await startWebhookReceiver();
    test.after(() => receiver.close());
    const { endpoint: created } = await endpoint(owner, receiver.url, ['task_finished']);
    // A client's own clock: the deliveries are stamped with the server's.
    const since = new Date(Date.now() - 1_000).toISOString();
    await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt: 'one' });
    await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt: 'two' });
    const [first] = await receiver.received(2);
    const id = first!.headers['webhook-id'] as string;
    const one = await graphql<{ replayWebhookDelivery: number }>(t.url, {
      query: 'mutation R($id: ID!) { replayWebhookDelivery(deliveryId: $id) }',
      variables: { id },
      apiKey: owner.apiKey,
    });
    assert.equal(one.body.data!.replayWebhookDelivery, 1);
    assert.equal((await receiver.received(3))[2]!.headers['webhook-id'], id);
    const all = await graphql<{ replayWebhookDeliveries: number }>(t.url, {
      query:
        'mutation R($id: ID!, $since: DateTime!) { replayWebhookDeliveries(endpointId: $id, since: $since) }',
      variables: { id: created.id, since },
      apiKey: owner.apiKey,
    });
    assert.equal(all.body.data!.replayWebhookDeliveries, 2);
    const requests = await receiver.received(5);
    assert.equal(new Set(requests.map((r) => r.headers['webhook-id'])).size, 2);

    const stranger = await seedAccount(t.app);
    const foreign = await graphql(t.url, {
      query: 'mutation R($id: ID!) { replayWebhookDelivery(deliveryId: $id) }',
      variables: { id },
      apiKey: stranger.apiKey,
    });
    assert.deepEqual(errorCodes(foreign), ['140004']);
  });

  it('an endpoint failing for a day is disabled, the account told, and enabling resumes it', async (test) => {
    const owner = await seedAccount(t.app);
    const broken = await startWebhookReceiver();
    const watcher = await startWebhookReceiver();
    test.after(() => broken.close());
    test.after(() => watcher.close());
    broken.answers.push(...Array.from({ length: 11 }, () => 500));
    const { endpoint: created } = await endpoint(owner, broken.url, ['task_finished']);
    const watching = await endpoint(owner, watcher.url, ['webhook_disabled']);
    await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt: 'doomed' });
    const delays = [
      5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 28_800_000,
      28_800_000,
    ];
    let moved = 0;
    try {
      await broken.received(1);
      for (const [i, delay] of delays.entries()) {
        await logUntil(
          owner,
          created.id,
          (log) => log[0]?.attempts.length === i + 1 && log[0].state !== 'delivered',
        );
        clock.advance(delay);
        moved += delay;
        await broken.received(i + 2);
      }
      const [failed] = await logUntil(owner, created.id, (log) => log[0]?.state === 'failed');
      assert.equal(failed!.attempts.length, 11);
      const [notice] = await watcher.received(1);
      const told = JSON.parse(notice!.body) as { type: string; data: { endpointId: string } };
      assert.deepEqual([told.type, told.data.endpointId], ['webhook.disabled', created.id]);
      const listed = await graphql<{
        listWebhookEndpoints: { id: string; enabled: boolean; disabledReason: string | null }[];
      }>(t.url, {
        query: '{ listWebhookEndpoints { id enabled disabledReason } }',
        apiKey: owner.apiKey,
      });
      const shown = listed.body.data!.listWebhookEndpoints.find((e) => e.id === created.id)!;
      assert.equal(shown.enabled, false);
      assert.match(shown.disabledReason!, /kept failing for a day/);
      assert.ok(watching.endpoint.id);

      // While disabled, new deliveries wait; enabled again, they go out.
      await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt: 'waiting' });
      const waiting = await logUntil(owner, created.id, (log) => log.length === 2);
      assert.equal(waiting[0]!.attempts.length, 0);
      const enabled = await graphql(t.url, {
        query:
          'mutation E($id: ID!) { updateWebhookEndpoint(endpointId: $id, input: { enabled: true }) { enabled } }',
        variables: { id: created.id },
        apiKey: owner.apiKey,
      });
      assert.deepEqual(errorCodes(enabled), []);
      await broken.received(12);
      await logUntil(owner, created.id, (log) => log[0]?.state === 'delivered');
    } finally {
      clock.advance(-moved);
    }
  });

  it('credits_low fires once when a debit takes a balance below the threshold', async (test) => {
    const owner = await seedAccount(t.app, { credits: { standard: 100 } });
    const receiver = await startWebhookReceiver();
    test.after(() => receiver.close());
    const res = await graphql<{ createWebhookEndpoint: { secret: string } }>(t.url, {
      query: createEndpoint,
      variables: { input: { url: receiver.url, events: ['credits_low'], creditsLowBelow: 95 } },
      apiKey: owner.apiKey,
    });
    assert.deepEqual(errorCodes(res), []);
    const { secret } = res.body.data!.createWebhookEndpoint;
    // Each image costs 3: 97 (above), then 94 (crossed), then 91 (already below).
    for (const prompt of ['a', 'b', 'c'])
      await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt });
    const [crossed] = await receiver.received(1);
    const event = verifyWebhook(secret, crossed!, clock) as {
      type: string;
      timestamp: string;
      data: unknown;
    };
    assert.deepEqual(event, {
      type: 'credits.low',
      timestamp: event.timestamp,
      data: { category: 'standard', balance: 94, threshold: 95 },
    });
    // Credits back above the threshold, then below again: a second crossing, a second event.
    await t.app.services.accounts.grant({
      accountId: owner.account.id,
      category: 'standard',
      amount: 10,
    });
    // 101, then 98 and 95 (not below 95), then 92: crossed again.
    for (const prompt of ['d', 'e', 'f'])
      await submitOk(t.url, owner.apiKey, { modelId: 'mdl_test-fast', prompt });
    const requests = await receiver.received(2);
    assert.equal(requests.length, 2);
    assert.deepEqual((JSON.parse(requests[1]!.body) as { data: unknown }).data, {
      category: 'standard',
      balance: 92,
      threshold: 95,
    });
  });

  it('a generation’s own webhookUrl is called when it ends, signed with the one-off secret', async (test) => {
    const owner = await seedAccount(t.app);
    const receiver = await startWebhookReceiver();
    test.after(() => receiver.close());
    const input = { modelId: 'mdl_test-fast', prompt: 'one-off', webhookUrl: receiver.url };
    const early = await generateImage(t.url, owner.apiKey, input);
    assert.deepEqual(errorCodes(early), ['120001']);
    assert.equal(early.body.errors![0]!.extensions!.field, 'webhookUrl');
    assert.match(early.body.errors![0]!.message, /rotateOneOffWebhookSecret/);

    const made = await graphql<{
      rotateOneOffWebhookSecret: { secret: string; endpoint: { id: string } };
    }>(t.url, {
      query: 'mutation { rotateOneOffWebhookSecret { secret endpoint { id } } }',
      apiKey: owner.apiKey,
    });
    const { secret, endpoint: oneOff } = made.body.data!.rotateOneOffWebhookSecret;
    const bad = await generateImage(t.url, owner.apiKey, {
      ...input,
      webhookUrl: 'http://example.com/x',
    });
    assert.deepEqual(errorCodes(bad), ['120001']);
    assert.equal(bad.body.errors![0]!.extensions!.field, 'webhookUrl');

    const { taskId } = await submitOk(t.url, owner.apiKey, input);
    const [request] = await receiver.received(1);
    const event = verifyWebhook(secret, request!, clock) as {
      type: string;
      data: { taskId: string };
    };
    assert.deepEqual([event.type, event.data.taskId], ['task.finished', taskId]);
    const [logged] = await logUntil(owner, oneOff.id, (log) => log[0]?.state === 'delivered');
    assert.equal(logged!.id, request!.headers['webhook-id']);
    const listed = await graphql<{ listWebhookEndpoints: unknown[] }>(t.url, {
      query: '{ listWebhookEndpoints { id } }',
      apiKey: owner.apiKey,
    });
    assert.deepEqual(listed.body.data!.listWebhookEndpoints, [], 'the one-off is not listed');
  });

  it('only public https URLs are accepted (loopback only with the switch), nothing is made otherwise', async () => {
    const owner = await seedAccount(t.app);
    for (const url of [
      'http://example.com/hook',
      'https://10.0.0.5/hook',
      'https://[fd00::1]/hook',
      'https://user:pw@example.com/hook',
      'ftp://example.com/hook',
      'not a url',
    ]) {
      const res = await graphql(t.url, {
        query: createEndpoint,
        variables: { input: { url, events: ['task_finished'] } },
        apiKey: owner.apiKey,
      });
      assert.deepEqual(errorCodes(res), ['120001'], url);
      assert.equal(res.body.errors![0]!.extensions!.field, 'url');
    }
    const listed = await graphql<{ listWebhookEndpoints: unknown[] }>(t.url, {
      query: '{ listWebhookEndpoints { id } }',
      apiKey: owner.apiKey,
    });
    assert.deepEqual(listed.body.data!.listWebhookEndpoints, []);
  });
});
