import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { postgresUrl } from '../../helpers/backends.ts';
import { atelier, type RunningServer, startServer, startWorker } from '../../helpers/cli.ts';
import { createEmptyPostgresDatabase } from '../../helpers/database.ts';
import { submitOk, testModels } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.ts';

// Issue 21: a worker killed while it sends a webhook loses nothing. The delivery was claimed
// under a lease (two 1-second deadlines and 5 s); once it runs out, another worker process
// sends the same message again, with the same webhook-id.

describe('a webhook delivery outlives the worker that was sending it [postgres: processes]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  const processes: RunningServer[] = [];
  const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-webhooks-'));
  after(async () => {
    for (const p of processes) await p.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('SIGKILL mid-delivery: another worker delivers the same message', async (t) => {
    const database = await createEmptyPostgresDatabase();
    t.after(() => database.drop());
    const receiver = await startWebhookReceiver();
    t.after(() => receiver.close());
    const env = {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      MODELS: testModels,
      WEBHOOK_ALLOW_LOCALHOST: 'true',
      WEBHOOK_TIMEOUT_SECONDS: '1',
      TASK_POLL_MS: '100',
    };
    assert.equal((await atelier(['migrate'], env)).code, 0);
    const account = JSON.parse(
      (
        await atelier(
          ['account', 'create', '--alias', 'hooks', '--api-key-access', '--credits', 'standard=10'],
          env,
        )
      ).stdout,
    ) as { id: string };
    const { secret: apiKey } = JSON.parse(
      (await atelier(['apikey', 'create', '--account', account.id], env)).stdout,
    ) as { secret: string };
    const api = await startServer({ ...env, WORKER_CONCURRENCY: '0' });
    processes.push(api);
    const created = await graphql<{ createWebhookEndpoint: { secret: string } }>(api.url, {
      query: `mutation C($input: CreateWebhookEndpointInput!) {
        createWebhookEndpoint(input: $input) { secret }
      }`,
      variables: { input: { url: receiver.url, events: ['task_finished'] } },
      apiKey,
    });
    assert.deepEqual(errorCodes(created), []);
    const { secret } = created.body.data!.createWebhookEndpoint;

    receiver.state.hold = true; // the first request is never answered
    const first = await startWorker(env);
    processes.push(first);
    await submitOk(api.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'crash' });
    const [held] = await receiver.received(1);
    await first.kill();
    receiver.state.hold = false;
    processes.push(await startWorker(env));

    const [, again] = await receiver.received(2, 30_000);
    assert.equal(again!.headers['webhook-id'], held!.headers['webhook-id']);
    new Webhook(secret).verify(again!.body, again!.headers as Record<string, string>);
  });
});
