import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import type { TestApp } from '../../helpers/app.ts';
import { type RunningServer, shortLeaseWorkerEnv, startServer } from '../../helpers/cli.ts';
import {
  checkpoint,
  comfyImageModel,
  posted,
  promptOf,
  withComfyApp,
} from '../../helpers/comfyui-models.ts';
import { migratedDataDir } from '../../helpers/data-dir.ts';
import { balances, submitOk, waitForTask } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { ComfyStandin } from '../../helpers/standins/comfyui.ts';
import type { RecordedRequest } from '../../helpers/standins/standin-server.ts';

// A server killed mid-task (SIGKILL: no chance to tidy up) while ComfyUI works on its prompt.
// The task's next attempt, on a new server, must find that prompt — still running, or finished
// meanwhile — and take its outputs, never queue the work a second time: one prompt, one
// result, one charge. And a worker that is alive when its lease passes on must leave the
// prompt running for the attempt that took over (no /interrupt). ComfyUI is the protocol
// stand-in (test/helpers/standins/comfyui.ts).

describe('a comfyui task whose server died mid-prompt [pglite: server processes]', () => {
  let comfy: ComfyStandin;
  const servers: RunningServer[] = [];
  const dirs: string[] = [];
  before(async () => {
    comfy = await ComfyStandin.start({ checkpoints: [checkpoint] });
  });
  after(async () => {
    for (const server of servers) await server.kill();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await comfy.close();
  });

  const env = async () => {
    const dataDir = await migratedDataDir('atelier-comfy-');
    dirs.push(dataDir);
    const models = JSON.stringify([comfyImageModel('mdl_comfy-sdxl', comfy.url)]);
    return { ...shortLeaseWorkerEnv(1), MODELS: models, DATA_DIR: dataDir };
  };
  const serve = async (vars: Record<string, string>) => {
    const server = await startServer(vars);
    servers.push(server);
    return server;
  };
  const submissions = (taskId: string) =>
    comfy.http.matching(
      (r) => r.method === 'POST' && r.path === '/prompt' && hasId(r, promptOf(taskId)),
    );

  /** Starts a server, submits, lets ComfyUI start the prompt, and kills the server. */
  const startThenDie = async (vars: Record<string, string>) => {
    const first = await serve(vars);
    const apiKey = /svc_[A-Za-z0-9]{32}/.exec(first.stderr())![0];
    comfy.script({ manual: true, steps: 3 });
    const { contentId, taskId } = await submitOk(first.url, apiKey, {
      modelId: 'mdl_comfy-sdxl',
      prompt: 'survive',
    });
    const run = await comfy.runOf(promptOf(taskId));
    await run.pace.waitingAt('start');
    run.pace.advance(2);
    await waitForTask(first.url, apiKey, taskId, (task) => (task.progress ?? 0) > 0);
    await first.kill();
    return { apiKey, contentId, taskId, run };
  };

  const assertOnceOnly = async (url: string, apiKey: string, taskId: string, contentId: string) => {
    const task = await waitForTask(url, apiKey, taskId, undefined, 30_000);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    assert.equal(submissions(taskId).length, 1, 'the prompt was queued once');
    const content = await graphql<{
      getContent: { media: unknown[]; creditsCharged: number; creditsRefunded: number };
    }>(url, {
      query:
        'query C($id: ID!) { getContent(contentId: $id) { media { mediaId } creditsCharged creditsRefunded } }',
      variables: { id: contentId },
      apiKey,
    });
    const { media, creditsCharged, creditsRefunded } = content.body.data!.getContent;
    assert.deepEqual([media.length, creditsCharged, creditsRefunded], [1, 3, 0]);
    assert.deepEqual(await balances(url, apiKey), { standard: 997 }, 'charged once');
  };

  it('follows the prompt still running on ComfyUI to its end', async () => {
    const vars = await env();
    const { apiKey, contentId, taskId, run } = await startThenDie(vars);
    const mark = comfy.http.requests.length;
    const second = await serve(vars);
    // The new attempt looks the prompt up (and finds it running) before anything moves on.
    await comfy.http.received(
      (r) => comfy.http.requests.indexOf(r) >= mark && r.path === '/queue',
      'the second attempt looking at the queue',
    );
    run.pace.release();
    await assertOnceOnly(second.url, apiKey, taskId, contentId);
  });

  it('takes the outputs of a prompt that finished while no server was up', async () => {
    const vars = await env();
    const { apiKey, contentId, taskId, run } = await startThenDie(vars);
    run.pace.release();
    await comfy.finished(promptOf(taskId));
    const second = await serve(vars);
    await assertOnceOnly(second.url, apiKey, taskId, contentId);
  });
});

function hasId(request: RecordedRequest, promptId: string): boolean {
  return (request.json as { prompt_id?: unknown } | undefined)?.prompt_id === promptId;
}

describe('a comfyui task whose lease passes to another attempt while its worker lives [pglite]', () => {
  let comfy: ComfyStandin;
  let database: Database;
  let t: TestApp;
  // One slot: the second attempt can start only once the first has stopped.
  withComfyApp(
    'pglite',
    (url) => [comfyImageModel('mdl_comfy-sdxl', url)],
    (started) => {
      ({ comfy, database, t } = started);
    },
    { WORKER_CONCURRENCY: '1', TASK_LEASE_MS: '1000' },
  );

  it('leaves the prompt running for the next attempt, which finishes it: no interrupt', async () => {
    const { apiKey } = await seedAccount(t.app, { credits: { standard: 10 } });
    comfy.script({ manual: true });
    const { contentId, taskId } = await submitOk(t.url, apiKey, {
      modelId: 'mdl_comfy-sdxl',
      prompt: 'hand over',
    });
    const run = await comfy.runOf(promptOf(taskId));
    await run.pace.waitingAt('start');
    // What another worker's sweep does to a lease it saw expire.
    await database.db
      .updateTable('tasks')
      .set({ status: 'queued', lease_token: null, lease_owner: null, lease_expires_at: null })
      .where('id', '=', taskId)
      .execute();
    await t.logged((e) => e.msg === 'task started' && e.taskId === taskId && e.attempt === 2);
    run.pace.release();
    const task = await waitForTask(t.url, apiKey, taskId);
    assert.equal(task.finishCode, FinishCode.Ok, task.finishMessage ?? '');
    const interrupts = comfy.http.matching(posted('/interrupt'));
    assert.deepEqual(interrupts, [], 'the first attempt, stopped as lost, left the prompt alone');
    assert.equal(
      comfy.http.matching((r) => posted('/prompt')(r) && hasId(r, promptOf(taskId))).length,
      1,
    );
    const media = await database.db
      .selectFrom('media')
      .select('id')
      .where('content_id', '=', contentId)
      .execute();
    assert.equal(media.length, 1);
    assert.deepEqual(await balances(t.url, apiKey), { standard: 7 });
  });
});
