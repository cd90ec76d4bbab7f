import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { ErrorCode } from '../../../src/shared/errors.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Samples of the Prometheus text format (comments skipped; label values unescaped). */
function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
function sampleSum(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name)
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

async function scrape(t: TestApp): Promise<Sample[]> {
  const response = await fetch(`${t.url}/metrics`);
  assert.equal(response.status, 200);
  return parseMetrics(await response.text());
}

/**
 * Scrapes until `check` passes: a worker records a finish right after its transaction commits,
 * which a client polling the task may see a moment earlier.
 */
async function scrapeUntil(t: TestApp, check: (samples: Sample[]) => void): Promise<Sample[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const samples = await scrape(t);
    try {
      check(samples);
      return samples;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(50);
    }
  }
}

const http = 'atelier_http_request_duration_seconds';
const operations = 'atelier_graphql_operations_total';
const taskDuration = 'atelier_task_duration_seconds';
const credits = 'atelier_credits_total';

describeEachBackend('GET /metrics with workers', (backend) => {
  let t: TestApp;
  withTestApp(backend, { env: { MODELS: testModels } }, (started) => {
    ({ t } = started);
  });

  it('is Prometheus text, not cached, with the process metrics of Node', async () => {
    const response = await fetch(`${t.url}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const samples = parseMetrics(await response.text());
    assert.ok(samples.some((s) => s.name === 'process_cpu_user_seconds_total'));
    assert.ok(samples.some((s) => s.name === 'nodejs_heap_size_used_bytes'));
  });

  it('counts requests by route pattern, operations by type, tasks by finish code and credits by reason', async () => {
    const before = await scrape(t);
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });

    assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
    assert.equal((await fetch(`${t.url}/media/med_nothing?exp=1&sig=x`)).status, 403);
    assert.equal((await fetch(`${t.url}/no/such/page`)).status, 404);
    const profile = await graphql(t.url, { query: '{ getUserByPrivateId { id } }', apiKey });
    assert.deepEqual(errorCodes(profile), []);
    const refused = await graphql(t.url, {
      query: 'mutation { cancelTask(taskId: "tsk_nothing") { status } }',
      apiKey,
    });
    assert.deepEqual(errorCodes(refused), [ErrorCode.NotFound]);

    const ok = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'a kite' });
    const failed = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fail', prompt: 'a kite' });
    assert.equal((await waitForTask(t.url, apiKey, ok.taskId)).finishCode, FinishCode.Ok);
    assert.equal(
      (await waitForTask(t.url, apiKey, failed.taskId)).finishCode,
      FinishCode.RejectedInput,
    );

    const delta = (after: Sample[], name: string, labels: Record<string, string>) =>
      sampleSum(after, name, labels) - sampleSum(before, name, labels);
    const after = await scrapeUntil(t, (samples) => {
      assert.equal(delta(samples, credits, { category: 'standard', reason: 'refund' }), 3);
      const failedCount = { model_id: 'mdl_test-fail', finish_code: '4' };
      assert.equal(delta(samples, `${taskDuration}_count`, failedCount), 1);
    });

    // HTTP: /graphql answered 200 (profile, the refused mutation, two submissions, the polls).
    const graphql200 = { method: 'POST', route: '/graphql', status_code: '200' };
    assert.ok(delta(after, `${http}_count`, graphql200) >= 4);
    assert.equal(delta(after, `${http}_count`, { route: '/healthz', status_code: '200' }), 1);
    assert.equal(
      delta(after, `${http}_count`, { route: '/media/:mediaId', status_code: '403' }),
      1,
    );
    assert.equal(delta(after, `${http}_count`, { route: 'not_found', status_code: '404' }), 1);
    const routes = new Set(
      after.filter((s) => s.name === `${http}_count`).map((s) => s.labels.route),
    );
    for (const route of routes) {
      assert.ok(route === 'not_found' || route?.startsWith('/'), `route label ${route}`);
      assert.doesNotMatch(route ?? '', /\?|med_|tsk_|\/no\/such/, 'a pattern, never the URL');
    }

    // GraphQL: executed operations by type; an AppError in the result is an error outcome.
    assert.ok(delta(after, operations, { operation_type: 'query', outcome: 'ok' }) >= 3);
    assert.equal(delta(after, operations, { operation_type: 'mutation', outcome: 'ok' }), 2);
    assert.equal(delta(after, operations, { operation_type: 'mutation', outcome: 'error' }), 1);

    // Tasks: one histogram observation per finish, labelled by model and finish code.
    const fast = { model_id: 'mdl_test-fast', finish_code: '0' };
    assert.equal(delta(after, `${taskDuration}_count`, fast), 1);
    assert.ok(delta(after, `${taskDuration}_sum`, fast) >= 0);
    const fastBuckets = after.filter((s) => s.name === `${taskDuration}_bucket`);
    assert.ok(
      fastBuckets.some((s) => s.labels.le === '+Inf' && s.labels.model_id === 'mdl_test-fast'),
    );

    // Credits: the seed's grant, two debits of 3, and the failed task's refund of 3.
    assert.equal(delta(after, credits, { category: 'standard', reason: 'grant' }), 10);
    assert.equal(delta(after, credits, { category: 'standard', reason: 'debit' }), 6);
    assert.equal(delta(after, credits, { category: 'standard', reason: 'refund' }), 3);
  });
});

describeEachBackend('GET /metrics queue gauges (workers off)', (backend) => {
  let t: TestApp;
  withTestApp(backend, { env: { MODELS: testModels, WORKER_CONCURRENCY: '0' } }, (started) => {
    ({ t } = started);
  });

  it('shows queued tasks by kind at scrape time, and a cancellation refund', async () => {
    const empty = await scrape(t);
    assert.equal(sampleSum(empty, 'atelier_queue_depth', { kind: 'image', status: 'queued' }), 0);
    assert.equal(sampleSum(empty, 'atelier_queue_depth', { kind: 'video', status: 'running' }), 0);
    assert.equal(sampleSum(empty, 'atelier_queue_oldest_age_seconds', { kind: 'image' }), 0);

    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    const first = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'one' });
    await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'two' });
    await sleep(20);

    const queued = await scrape(t);
    assert.equal(sampleSum(queued, 'atelier_queue_depth', { kind: 'image', status: 'queued' }), 2);
    assert.equal(sampleSum(queued, 'atelier_queue_depth', { kind: 'image', status: 'running' }), 0);
    assert.equal(sampleSum(queued, 'atelier_queue_depth', { kind: 'speech', status: 'queued' }), 0);
    const age = sampleSum(queued, 'atelier_queue_oldest_age_seconds', { kind: 'image' });
    assert.ok(age > 0 && age < 60, `oldest age ${age}`);

    const cancelled = await graphql(t.url, {
      query: 'mutation X($id: ID!) { cancelTask(taskId: $id) { status } }',
      variables: { id: first.taskId },
      apiKey,
    });
    assert.deepEqual(errorCodes(cancelled), []);
    const after = await scrape(t);
    assert.equal(sampleSum(after, 'atelier_queue_depth', { kind: 'image', status: 'queued' }), 1);
    assert.equal(sampleSum(after, credits, { category: 'standard', reason: 'debit' }), 6);
    assert.equal(sampleSum(after, credits, { category: 'standard', reason: 'refund' }), 3);
    assert.equal(sampleSum(after, credits, { category: 'standard', reason: 'grant' }), 10);
    // Cancellations are the client's decision, not a worker's duration.
    assert.equal(sampleSum(after, `${taskDuration}_count`), 0);
  });
});
