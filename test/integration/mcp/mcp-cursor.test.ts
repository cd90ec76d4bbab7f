import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 21: over MCP, a generation's state (a resource read, get_generation) carries its cursor
// in the task event log, and wait_for_generation(after:) goes on from there, from the same log.

interface State {
  status: string;
  finish_code: number | null;
  cursor: string | null;
}

describeEachBackend('/mcp generations and the task event log (issue 21)', (backend) => {
  let t: TestApp;
  withTestApp(backend, { env: { MODELS: testModels } }, (started) => {
    ({ t } = started);
  });

  it('a read gives the cursor; waiting after it returns at once when the finish is behind it', async (test) => {
    const { account, apiKey } = await seedAccount(t.app);
    const client = await connectMcpClient(t, await mcpAccessToken(t, account.id));
    test.after(() => client.close());
    const { contentId, taskId } = await submitOk(t.url, apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'a cursor',
    });
    await waitForTask(t.url, apiKey, taskId);
    const read = (await client.readResource({
      uri: `atelier://generations/${contentId}`,
    })) as ReadResourceResult;
    const first = read.contents[0]!;
    assert.ok('text' in first);
    const state = JSON.parse(first.text) as State;
    assert.equal(state.status, 'finished');
    assert.equal(typeof state.cursor, 'string');

    const progress: unknown[] = [];
    const waited = await client.callTool(
      { name: 'wait_for_generation', arguments: { task_id: taskId, after: state.cursor } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    assert.notEqual(waited.isError, true, JSON.stringify(waited.content));
    const result = waited.structuredContent as unknown as State;
    assert.deepEqual([result.status, result.finish_code], ['finished', FinishCode.Ok]);
    assert.deepEqual(progress, [], 'nothing after the cursor to report');
  });

  it('a cursor that is not one is refused with 120001 naming after', async (test) => {
    const { account, apiKey } = await seedAccount(t.app);
    const client = await connectMcpClient(t, await mcpAccessToken(t, account.id));
    test.after(() => client.close());
    const { taskId } = await submitOk(t.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'x' });
    const refused = await client.callTool({
      name: 'wait_for_generation',
      arguments: { task_id: taskId, after: 'not-a-cursor' },
    });
    assert.equal(refused.isError, true);
    assert.match(JSON.stringify(refused.content), /120001/);
    assert.match(JSON.stringify(refused.content), /after/);

    // Another account's task is not found at once, not after the wait's timeout.
    const stranger = await seedAccount(t.app);
    const theirs = await submitOk(t.url, stranger.apiKey, {
      modelId: 'mdl_test-slow',
      prompt: 'y',
    });
    const foreign = await client.callTool({
      name: 'wait_for_generation',
      arguments: { task_id: theirs.taskId, timeout_seconds: 60 },
    });
    assert.equal(foreign.isError, true);
    assert.match(JSON.stringify(foreign.content), /140004/);
  });
});
