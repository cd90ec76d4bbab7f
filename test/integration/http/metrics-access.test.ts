import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { startServer } from '../../helpers/cli.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { freePort } from '../../helpers/net.ts';
import { remoteImageModel } from '../../helpers/remote-engines.ts';

// `/metrics` tells whoever reads it about traffic, queues and credits: an operator can require
// a bearer token (METRICS_TOKEN), serve it on a listener of its own (METRICS_PORT), or both.

const token = 'a-metrics-token-of-some-length';

const scrape = (url: string, authorization?: string, path = '/metrics') =>
  fetch(`${url}${path}`, authorization === undefined ? {} : { headers: { authorization } });

// A model on an internal model server (never called): /readyz knows its origin, which is for
// whoever may read /metrics only.
const gpuBox = 'http://gpu-box.internal:8880';
const internalModel = {
  MODELS: JSON.stringify([remoteImageModel('mdl_gpu', `${gpuBox}/v1`, 'sdxl')]),
  REMOTE_KEY: 'sk-never-sent',
};
const readiness = async (url: string, authorization?: string) => {
  const res = await scrape(url, authorization, '/readyz');
  return { status: res.status, text: await res.text() };
};

describeEachBackend('GET /metrics behind METRICS_TOKEN', (backend) => {
  let t: TestApp;
  withTestApp(backend, { env: { METRICS_TOKEN: token, ...internalModel } }, (started) => {
    ({ t } = started);
  });

  it('without the token, or with another one: 401 with a Bearer challenge, no metrics', async () => {
    for (const authorization of [
      undefined,
      'Bearer wrong-token-of-the-same-size!',
      `Bearer ${token}x`,
      `Basic ${Buffer.from(`x:${token}`).toString('base64')}`,
      token,
    ]) {
      const res = await scrape(t.url, authorization);
      const text = await res.text();
      assert.equal(res.status, 401, String(authorization));
      assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm="metrics"/);
      assert.equal((JSON.parse(text) as { error: { code: string } }).error.code, '100101');
      assert.doesNotMatch(text, /atelier_|process_/);
    }
  });

  it('with the token: the Prometheus text', async () => {
    const res = await scrape(t.url, `Bearer ${token}`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /atelier_http_request_duration_seconds/);
  });

  it("/readyz answers anyone, but shows the model servers' origins only with the token", async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-of-the-same-size!']) {
      const ready = await readiness(t.url, authorization);
      assert.equal(ready.status, 200);
      assert.deepEqual(JSON.parse(ready.text), { status: 'ready' }, String(authorization));
    }
    const operator = await readiness(t.url, `Bearer ${token}`);
    assert.equal(operator.status, 200);
    const { backends } = JSON.parse(operator.text) as { backends: { backend: string }[] };
    assert.deepEqual(
      backends.map((b) => b.backend),
      [`openai-images ${gpuBox}`],
    );
  });

  it('with the token, /readyz and /metrics show each pool: its backends’ state, runs and queue', async () => {
    const { pools } = JSON.parse((await readiness(t.url, `Bearer ${token}`)).text) as {
      pools: Array<Record<string, unknown> & { backends: Array<Record<string, unknown>> }>;
    };
    // A model with one engine is a pool of one, without a cap, named after its engine.
    assert.deepEqual(
      pools.map(({ backends, ...pool }) => ({
        ...pool,
        backends: backends.map((b) => [b.name, b.state, b.inFlight, b.maxConcurrent]),
      })),
      [
        {
          modelId: 'mdl_gpu',
          status: 'up',
          queued: 0,
          inFlight: 0,
          capacity: null,
          backends: [['openai-images', 'up', 0, null]],
        },
      ],
    );
    const metrics = await (await scrape(t.url, `Bearer ${token}`)).text();
    assert.match(metrics, /^atelier_backend_up\{model_id="mdl_gpu",backend="openai-images"\} 1$/m);
    assert.match(
      metrics,
      /^atelier_backend_in_flight\{model_id="mdl_gpu",backend="openai-images"\} 0$/m,
    );
    assert.match(metrics, /^atelier_pool_queued\{model_id="mdl_gpu"\} 0$/m);
    // Unlimited: no capacity to report.
    assert.doesNotMatch(metrics, /^atelier_backend_capacity\{/m);
  });
});

describeEachBackend('GET /metrics on METRICS_PORT', (backend) => {
  let database: Database;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, {
      env: { METRICS_PORT: String(await freePort()), ...internalModel },
    });
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  it('is served on its own loopback listener and not on the main port', async () => {
    assert.equal((await scrape(t.url)).status, 404);
    assert.ok(t.metricsUrl?.startsWith('http://127.0.0.1:'), String(t.metricsUrl));
    const res = await scrape(t.metricsUrl!);
    assert.equal(res.status, 200);
    // The main port's traffic is what it measures.
    assert.match(await res.text(), /route="not_found"/);
    // Nothing else is served there.
    assert.equal((await fetch(`${t.metricsUrl}/graphql`)).status, 404);
  });

  it('/readyz on the main port shows no backend detail: it is on the metrics listener', async () => {
    const ready = await readiness(t.url);
    assert.equal(ready.status, 200);
    assert.deepEqual(JSON.parse(ready.text), { status: 'ready' });
    assert.doesNotMatch(ready.text, /gpu-box/);
  });
});

describe('bin/atelier serve with METRICS_PORT and METRICS_TOKEN', () => {
  it('listens for /metrics on 127.0.0.1:METRICS_PORT only, behind the token', async (t) => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-metrics-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const metricsPort = await freePort();
    const server = await startServer({
      DATA_DIR: dataDir,
      METRICS_PORT: String(metricsPort),
      METRICS_TOKEN: token,
    });
    t.after(() => server.stop());
    const metricsUrl = `http://127.0.0.1:${metricsPort}`;
    assert.match(server.stderr(), new RegExp(`Metrics: ${metricsUrl}/metrics \\(bearer token\\)`));
    assert.equal((await scrape(server.url, `Bearer ${token}`)).status, 404);
    assert.equal((await scrape(metricsUrl)).status, 401);
    assert.equal((await scrape(metricsUrl, `Bearer ${token}`)).status, 200);
  });
});
