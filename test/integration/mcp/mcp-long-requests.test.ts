import assert from 'node:assert/strict';
import { it } from 'node:test';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { getTask, submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { mcpAccessToken, sendMcp } from '../../helpers/mcp.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 30 §5: a wait_for_generation without a progress token sent nothing — not even its
// headers — until it answered, up to a minute, and a client's notifications/cancelled was
// ignored: the wait ran on and answered ~11 s later. Raw requests, to see every byte.

const decoder = new TextDecoder();

/** Reads a response body chunk by chunk; `rest()` reads to its end. */
function chunks(response: Response) {
  const reader = response.body!.getReader();
  return {
    async next(): Promise<string | null> {
      const { done, value } = await reader.read();
      return done ? null : decoder.decode(value);
    },
    async rest(): Promise<string> {
      let text = '';
      for (let chunk = await this.next(); chunk !== null; chunk = await this.next()) text += chunk;
      return text;
    },
  };
}

describeEachBackend('long MCP requests: at once, and cancellable (issue 30)', (backend) => {
  let t: TestApp;
  let database: Database;
  withTestApp(backend, { env: { MODELS: testModels } }, (started) => {
    ({ t, database } = started);
  });

  async function slowTask() {
    const { account, apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const token = await mcpAccessToken(t, account.id);
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_test-slow', prompt: 'slow' });
    return { apiKey, taskId, headers: { authorization: `Bearer ${token}` } };
  }

  const wait = (url: string, headers: Record<string, string>, id: number, taskId: string) =>
    sendMcp(url, headers, {
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'wait_for_generation', arguments: { task_id: taskId, timeout_seconds: 30 } },
    });

  it('a wait without a progress token sends its headers and a first byte at once', async () => {
    const { apiKey, taskId, headers } = await slowTask();
    const res = await wait(t.url, headers, 7, taskId);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const body = chunks(res);
    const first = await body.next();
    assert.match(first ?? '', /^: /, 'an SSE comment, which clients skip');
    // Headers and a byte came while the generation still runs (it takes 4 s).
    assert.notEqual((await getTask(t.url, apiKey, taskId)).status, 'finished');
    const rest = await body.rest();
    assert.match(rest, /"id":7/);
    assert.match(rest, /"status\\?":\\?"finished/);
  });

  it('notifications/cancelled stops the wait, without an answer; the task runs on', async () => {
    const { apiKey, taskId, headers } = await slowTask();
    const res = await wait(t.url, headers, 'wait-1' as unknown as number, taskId);
    const body = chunks(res);
    await body.next(); // the request runs
    const cancelled = await sendMcp(t.url, headers, {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'wait-1', reason: 'the user gave up' },
    });
    assert.equal(cancelled.status, 202);
    const rest = await body.rest();
    assert.doesNotMatch(rest, /"id":"wait-1"/, 'no answer to a cancelled request');
    assert.notEqual((await getTask(t.url, apiKey, taskId)).status, 'finished', 'stopped early');
    // The task itself was not cancelled.
    assert.equal((await waitForTask(t.url, apiKey, taskId)).finishCode, FinishCode.Ok);
  });

  it('a cancellation names a request of its own token only', async () => {
    const mine = await slowTask();
    const other = await slowTask();
    const res = await wait(t.url, mine.headers, 99, mine.taskId);
    const body = chunks(res);
    await body.next();
    const foreign = await sendMcp(t.url, other.headers, {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 99 },
    });
    assert.equal(foreign.status, 202);
    const rest = await body.rest();
    assert.match(rest, /"id":99/, 'answered: another client cannot cancel it');
  });

  if (backend === 'postgres') {
    it('a cancellation sent through another node stops the request where it runs', async () => {
      // Two nodes behind one load balancer share one PUBLIC_URL (the tokens' audience).
      const other = await startTestApp(database, {
        env: { MODELS: testModels, PUBLIC_URL: t.url },
      });
      try {
        const { apiKey, taskId, headers } = await slowTask();
        const res = await wait(t.url, headers, 5, taskId);
        const body = chunks(res);
        await body.next();
        const cancelled = await sendMcp(other.url, headers, {
          jsonrpc: '2.0',
          method: 'notifications/cancelled',
          params: { requestId: 5 },
        });
        assert.equal(cancelled.status, 202);
        assert.doesNotMatch(await body.rest(), /"id":5/);
        assert.notEqual((await getTask(t.url, apiKey, taskId)).status, 'finished');
      } finally {
        await other.close();
      }
    });
  }
});
