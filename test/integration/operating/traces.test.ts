import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { registerHooks } from 'node:module';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import { type RunningServer, startServer, startWorker } from '../../helpers/cli.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { type SubmitResult, submitImage, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { type ReceivedSpan, startOtlpReceiver } from '../../helpers/otlp-receiver.ts';
import { remoteImageModel } from '../../helpers/remote-engines.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { OpenAiStandin } from '../../helpers/standins/openai.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';

// Issue 32 §6: one generation is one trace, from the client's span through the GraphQL request
// and the submission (API process) to the wait in the queue, the engine run and its call of the
// model server (worker process), joined through the task row; the model server gets the
// trace's `traceparent`. Spans go to an OTLP/HTTP receiver on loopback. Off, nothing is sent
// and the SDK is never loaded.

const key = 'sk-standin-0123456789abcdefABCDEF';
const SERVER = 2;
const CLIENT = 3;

/** Submits one image over GraphQL as a traced client would: with its own `traceparent`. */
async function submitTraced(url: string, apiKey: string, traceparent: string) {
  const res = await graphql<SubmitResult>(url, {
    query: submitImage,
    variables: { input: { modelId: 'mdl_traced', prompt: 'a lighthouse at dusk' } },
    apiKey,
    headers: { traceparent },
  });
  assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
  return res.body.data!.generateImage!;
}

describe('traces across an API and a worker process [postgres]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  const standin = new OpenAiStandin(key);
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let hooks: WebhookReceiver;
  let database: Database;
  let seeder: TestApp;
  let api: RunningServer;
  let worker: RunningServer;

  before(async () => {
    await standin.server.listen();
    receiver = await startOtlpReceiver();
    hooks = await startWebhookReceiver();
    database = await createTestDatabase('postgres');
    const models = JSON.stringify([remoteImageModel('mdl_traced', standin.baseUrl, 'gpt-image-1')]);
    // In process, only to seed accounts: untraced, and it runs no tasks.
    seeder = await startTestApp(database, {
      env: { MODELS: models, REMOTE_KEY: key, WORKER_CONCURRENCY: '0' },
    });
    const env = {
      DATABASE_URL: database.connectionUrl!,
      DATA_DIR: seeder.app.config.dataDir,
      MODELS: models,
      REMOTE_KEY: key,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '20', // 20 ms: spans leave at once
      WEBHOOK_ALLOW_LOCALHOST: 'true',
    };
    api = await startServer({ ...env, WORKER_CONCURRENCY: '0' });
    worker = await startWorker({ ...env, WORKER_CONCURRENCY: '1', TASK_POLL_MS: '100' });
  });
  after(async () => {
    await worker?.stop();
    await api?.stop();
    await seeder?.close();
    await database?.close();
    await receiver?.close();
    await hooks?.close();
    await standin.server.close();
  });

  it('one generation is one trace: request → submit → queue wait → engine run → provider call', async () => {
    const { apiKey } = await seedAccount(seeder.app, { credits: { standard: 100 } });
    const traceId = randomBytes(16).toString('hex');
    const clientSpanId = randomBytes(8).toString('hex');
    const hook = await graphql(api.url, {
      query: `mutation { createWebhookEndpoint(input: { url: "${hooks.url}", events: [task_finished] }) { secret } }`,
      apiKey,
    });
    assert.deepEqual(errorCodes(hook), []);
    const { taskId } = await submitTraced(api.url, apiKey, `00-${traceId}-${clientSpanId}-01`);
    await waitForTask(api.url, apiKey, taskId);

    const named = (spans: readonly ReceivedSpan[], name: string) =>
      spans.find((s) => s.traceId === traceId && s.name === name);
    const expected = [
      'POST /graphql',
      'atelier.submit',
      'atelier.queue.wait',
      'atelier.engine.run',
    ];
    await receiver.until(
      (spans) =>
        expected.every((name) => named(spans, name) !== undefined) &&
        spans.some((s) => s.traceId === traceId && s.kind === CLIENT),
    );
    const spans = receiver.spans;
    const request = named(spans, 'POST /graphql')!;
    const submit = named(spans, 'atelier.submit')!;
    const wait = named(spans, 'atelier.queue.wait')!;
    const run = named(spans, 'atelier.engine.run')!;
    const call = spans.find((s) => s.traceId === traceId && s.kind === CLIENT)!;

    // The GraphQL request continues the client's trace, as its server span.
    assert.equal(request.parentSpanId, clientSpanId);
    assert.equal(request.kind, SERVER);
    assert.equal(request.attributes['graphql.operation.name'], 'Submit');
    assert.equal(request.attributes['graphql.operation.type'], 'mutation');
    assert.equal(request.attributes['http.response.status_code'], 200);
    // submit → queue wait → engine run, across the two processes through the task row.
    assert.equal(submit.parentSpanId, request.spanId);
    assert.equal(submit.attributes['atelier.task_id'], taskId);
    assert.equal(wait.parentSpanId, submit.spanId);
    assert.equal(run.parentSpanId, submit.spanId);
    assert.equal(run.attributes['atelier.task_id'], taskId);
    assert.equal(run.attributes['atelier.finish_code'], 0);
    assert.equal(request.resource['atelier.process.role'], 'server');
    assert.equal(submit.resource['process.pid'], api.child.pid);
    assert.equal(wait.resource['atelier.process.role'], 'worker');
    assert.equal(run.resource['process.pid'], worker.child.pid);
    // The model server's call is the run's child, and carries the trace to the server.
    assert.equal(call.parentSpanId, run.spanId);
    assert.equal(call.attributes['http.response.status_code'], 200);
    const [sent] = standin.calls('/images/generations');
    assert.equal(sent?.headers.traceparent, `00-${traceId}-${call.spanId}-01`);
    // Every span naming the task is in the one trace.
    const ofTask = spans.filter((s) => s.attributes['atelier.task_id'] === taskId);
    assert.ok(ofTask.length >= 3);
    assert.deepEqual([...new Set(ofTask.map((s) => s.traceId))], [traceId]);
    // The webhook of its end is sent in the same trace, and says so to the receiver.
    const [delivered] = await hooks.received(1);
    await receiver.until((all) => named(all, 'atelier.webhook.deliver') !== undefined);
    const delivery = named(receiver.spans, 'atelier.webhook.deliver')!;
    assert.equal(delivery.kind, CLIENT);
    assert.equal(delivered?.headers.traceparent, `00-${traceId}-${delivery.spanId}-01`);
    // Nothing in attributes that a client wrote (the prompt).
    assert.ok(!JSON.stringify(spans).includes('lighthouse'));
  });
});

describe('traces off', () => {
  const standin = new OpenAiStandin(key);
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let database: Database;

  before(async () => {
    await standin.server.listen();
    receiver = await startOtlpReceiver();
    database = await createTestDatabase('pglite');
  });
  after(async () => {
    await database?.close();
    await receiver?.close();
    await standin.server.close();
  });

  for (const [why, env] of [
    ['OTEL_SDK_DISABLED=true', { OTEL_SDK_DISABLED: 'true' }],
    ['OTEL_TRACES_EXPORTER=none', { OTEL_TRACES_EXPORTER: 'none' }],
  ] as const) {
    it(`with ${why}: nothing is exported, no traceparent leaves, the SDK is never loaded`, async () => {
      // Every module resolved from here on; the test process itself never loads the SDK.
      const resolved: string[] = [];
      const hooks = registerHooks({
        resolve(specifier, context, next) {
          resolved.push(specifier);
          return next(specifier, context);
        },
      });
      try {
        const t = await startTestApp(database, {
          env: {
            MODELS: JSON.stringify([
              remoteImageModel('mdl_traced', standin.baseUrl, 'gpt-image-1'),
            ]),
            REMOTE_KEY: key,
            WORKER_CONCURRENCY: '1',
            OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
            OTEL_BSP_SCHEDULE_DELAY: '20',
            ...env,
          },
        });
        try {
          assert.equal(t.app.config.tracing, null);
          const { apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
          const traceId = randomBytes(16).toString('hex');
          const parent = `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
          const { taskId } = await submitTraced(t.url, apiKey, parent);
          await waitForTask(t.url, apiKey, taskId);
          const calls = standin.calls('/images/generations');
          assert.equal(calls.at(-1)?.headers.traceparent, undefined);
          const [row] = await database.db
            .selectFrom('tasks')
            .select('trace_context')
            .where('id', '=', taskId)
            .execute();
          assert.equal(row?.trace_context, null);
        } finally {
          // Closing would flush the SDK's queue, were it running: after it, nothing is late.
          await t.close();
        }
        assert.deepEqual(receiver.requests, []);
        assert.deepEqual(
          resolved.filter((s) => /^@opentelemetry\/(?!api$)|tracing-sdk\.ts$/.test(s)),
          [],
        );
      } finally {
        hooks.deregister();
      }
    });
  }
});
