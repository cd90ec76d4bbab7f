import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { FinishCode } from '../../src/domain/finish-code.ts';
import type { Database } from '../../src/store/database.ts';
import { errorCodes, type GraphqlResponse, graphql } from './graphql.ts';

export interface TaskState {
  taskId: string;
  status: 'queued' | 'running' | 'finished';
  finishCode: number | null;
  finishMessage: string | null;
  progress: number | null;
}

export const submitImage = `mutation Submit($input: GenerateImageInput!) {
  generateImage(input: $input) { contentId taskId deduplicated }
}`;

export interface SubmitResult {
  generateImage: { contentId: string; taskId: string; deduplicated: boolean } | null;
}

export function generateImage(
  url: string,
  apiKey: string,
  input: Record<string, unknown>,
): Promise<GraphqlResponse<SubmitResult>> {
  return graphql<SubmitResult>(url, { query: submitImage, variables: { input }, apiKey });
}

/** Submits and asserts success; returns the IDs. */
export async function submitOk(url: string, apiKey: string, input: Record<string, unknown>) {
  const res = await generateImage(url, apiKey, input);
  assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
  return res.body.data!.generateImage!;
}

export async function getTask(url: string, apiKey: string, taskId: string): Promise<TaskState> {
  const res = await graphql<{ getTask: TaskState }>(url, {
    query:
      'query T($id: ID!) { getTask(taskId: $id) { taskId status finishCode finishMessage progress } }',
    variables: { id: taskId },
    apiKey,
  });
  assert.deepEqual(errorCodes(res), [], JSON.stringify(res.body.errors));
  return res.body.data!.getTask;
}

/** Polls getTask, as a client would, until `until` holds (default: finished). */
export async function waitForTask(
  url: string,
  apiKey: string,
  taskId: string,
  until: (task: TaskState) => boolean = (t) => t.status === 'finished',
  timeoutMs = 30_000,
): Promise<TaskState> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await getTask(url, apiKey, taskId);
    if (until(task)) return task;
    if (Date.now() > deadline)
      assert.fail(`task ${taskId} still ${JSON.stringify(task)} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

export async function balances(url: string, apiKey: string): Promise<Record<string, number>> {
  const res = await graphql<{
    getUserByPrivateId: { creditBalances: Array<{ category: string; amount: number }> };
  }>(url, { query: '{ getUserByPrivateId { creditBalances { category amount } } }', apiKey });
  return Object.fromEntries(
    res.body.data!.getUserByPrivateId.creditBalances.map((b) => [b.category, b.amount]),
  );
}

/** Test models on the deterministic fake engine, added through `MODELS` like an operator would. */
export const testModels = JSON.stringify([
  fakeModel('mdl_test-slow', { durationMs: 4_000 }),
  fakeModel('mdl_test-fail', {
    failCode: FinishCode.RejectedInput,
    failMessage: 'The input image could not be read.',
  }),
  fakeModel('mdl_test-crash', { throw: true }),
  fakeModel('mdl_test-fast', {}),
  fakeModel('mdl_test-quick', { durationMs: 600 }),
]);

/** An image model on the fake engine; `extra` adds or overrides model fields (`maxRunSeconds`). */
export function fakeModel(
  modelId: string,
  engineOptions: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    ...extra,
    modelId,
    name: modelId,
    kind: 'image',
    engine: 'fake',
    engineOptions,
    capabilities: {
      sizes: [{ width: 64, height: 64, aspectRatio: '1:1', maxCount: 4 }],
      formats: ['png'],
    },
    pricing: { unit: 'image', credits: 3, category: null },
  };
}

/** How many contents (generations submitted) an account has, straight from the database. */
export async function countContents(database: Database, accountId: string): Promise<number> {
  const rows = await database.db
    .selectFrom('contents')
    .select('id')
    .where('account_id', '=', accountId)
    .execute();
  return rows.length;
}
