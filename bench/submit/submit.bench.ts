// Submit latency by edge: the same image generation on the no-op engine (bench/noop-model.ts)
// asked of one Atelier through GraphQL, MCP and the OpenAI-compatible `/v1`, one request at a
// time. Two measures:
//
// - submit: the generation queued and charged, the answer naming it and its charge — GraphQL
//   `generateImage { contentId taskId deduplicated content { creditsCharged } }` (API key)
//   against MCP `tools/call generate_image` (access token). `/v1` has no such call: it answers
//   with the image.
// - to result: submitted, finished, and its media's download URLs in hand (the no-op engine
//   makes none, so the lists are empty) — GraphQL (the mutation, the `taskUpdated`
//   subscription until finished over a graphql-ws connection kept open, then `getContent`),
//   MCP (`generate_image`, then `wait_for_generation`), and `/v1`
//   (`POST /v1/images/generations`, one request).
//
// Edges alternate request by request, so each sees the same machine; the difference to
// GraphQL (p50, p99) is what an edge adds.
//
//   node bench/submit/submit.bench.ts [--requests 200] [--warmup 30]
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from 'graphql-ws';
import { graphqlClient } from '../graphql-client.ts';
import { report } from '../report.ts';
import { connectGraphqlWs, startServer, stopServer } from '../server-process.ts';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '30' },
  },
});
const requests = Number(values.requests);
const warmup = Number(values.warmup);
const modelId = 'mdl_bench-noop';

interface Started {
  child: ChildProcess;
  url: string;
  apiKey: string;
  token: string;
}

const start = (env: Record<string, string>) =>
  startServer<Omit<Started, 'child'>>(new URL('./servers/atelier.server.ts', import.meta.url), env);

const dataDir = await mkdtemp(path.join(tmpdir(), 'atelier-bench-submit-'));
const server = await start({ DATABASE_URL: '', DATA_DIR: dataDir });

const graphql = graphqlClient(server.url, server.apiKey);

let rpcId = 0;
/** One `tools/call`; its structured result. */
async function mcpTool(
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
      authorization: `Bearer ${server.token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: ++rpcId,
      method: 'tools/call',
      params: { name, arguments: args },
    }),
  });
  const text = await res.text();
  const data = text.startsWith('{')
    ? text
    : text
        .split('\n')
        .find((line) => line.startsWith('data: '))
        ?.slice('data: '.length);
  const message = JSON.parse(data ?? 'null') as {
    result?: { isError?: boolean; structuredContent?: Record<string, unknown> };
  } | null;
  const result = message?.result;
  if (res.status !== 200 || result?.structuredContent === undefined || result.isError === true)
    throw new Error(`MCP ${name} answered ${res.status}: ${text}`);
  return result.structuredContent;
}

const connect = () => connectGraphqlWs(server.url, server.apiKey);

const submitMutation = `mutation ($input: GenerateImageInput!) {
  generateImage(input: $input) { contentId taskId deduplicated content { creditsCharged } }
}`;

async function graphqlSubmit(): Promise<{ contentId: string; taskId: string }> {
  const data = await graphql<{ generateImage: { contentId: string; taskId: string } }>(
    submitMutation,
    { input: { modelId, prompt: 'x' } },
  );
  return data.generateImage;
}

async function finished(client: Client, taskId: string): Promise<void> {
  const updates = client.iterate<{ taskUpdated: { status: string; finishCode: number | null } }>({
    query: 'subscription ($taskId: ID!) { taskUpdated(taskId: $taskId) { status finishCode } }',
    variables: { taskId },
  });
  for await (const update of updates) {
    if (update.errors !== undefined) throw new Error(JSON.stringify(update.errors));
    const task = update.data?.taskUpdated;
    if (task?.status !== 'finished') continue;
    if (task.finishCode !== 0) throw new Error(`the task finished with ${task.finishCode}`);
    await updates.return?.();
    return;
  }
  throw new Error('the subscription ended before the task finished');
}

const client = await connect();

/** Each measure: what one request (or chain of requests) of an edge does. */
const runs: Record<string, () => Promise<void>> = {
  'submit graphql': async () => {
    await graphqlSubmit();
  },
  'submit mcp': async () => {
    await mcpTool('generate_image', { model_id: modelId, prompt: 'x' });
  },
  'to result graphql': async () => {
    const { contentId, taskId } = await graphqlSubmit();
    await finished(client, taskId);
    const data = await graphql<{ getContent: { media: { download: { url: string } }[] } }>(
      'query ($id: ID!) { getContent(contentId: $id) { media { download { url } } } }',
      { id: contentId },
    );
    if (!Array.isArray(data.getContent.media)) throw new Error('no media list');
  },
  'to result mcp': async () => {
    const submitted = await mcpTool('generate_image', { model_id: modelId, prompt: 'x' });
    const done = await mcpTool('wait_for_generation', { task_id: submitted.task_id });
    if (!JSON.stringify(done).includes('"finished"'))
      throw new Error(`not finished: ${JSON.stringify(done)}`);
  },
  'to result /v1': async () => {
    const res = await fetch(`${server.url}/v1/images/generations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${server.apiKey}` },
      body: JSON.stringify({ model: modelId, prompt: 'x' }),
    });
    const body = (await res.json()) as { data?: { url?: string }[] };
    if (res.status !== 200 || !Array.isArray(body.data))
      throw new Error(`/v1 answered ${res.status}: ${JSON.stringify(body)}`);
  },
};

const timings = new Map<string, number[]>(Object.keys(runs).map((name) => [name, []]));
try {
  for (let i = 0; i < warmup + requests; i++) {
    for (const [name, run] of Object.entries(runs)) {
      const started = performance.now();
      await run();
      if (i >= warmup) timings.get(name)!.push(performance.now() - started);
    }
  }
} finally {
  await client.dispose();
  await stopServer(server);
  await rm(dataDir, { recursive: true, force: true });
}

const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const stats = new Map(
  [...timings].map(([name, ms]) => {
    const sorted = [...ms].sort((a, b) => a - b);
    return [name, { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }] as const;
  }),
);

console.log(`\n${requests} requests per measure, one at a time, PGlite, node ${process.version}\n`);
console.log('measure                p50 ms   p99 ms   +p50 ms over GraphQL   +p99 ms');
for (const [name, s] of stats) {
  const graphqlOf = stats.get(name.replace(/ (mcp|\/v1)$/, ' graphql'))!;
  const extra = name.endsWith(' graphql')
    ? ''
    : `${(s.p50 - graphqlOf.p50).toFixed(2).padStart(22)} ${(s.p99 - graphqlOf.p99).toFixed(2).padStart(9)}`;
  console.log(
    `${name.padEnd(20)} ${s.p50.toFixed(2).padStart(8)} ${s.p99.toFixed(2).padStart(8)} ${extra}`,
  );
}
report(
  [...stats]
    .filter(([name]) => !name.endsWith(' graphql'))
    .map(([name, s]) => {
      const edge = name.endsWith(' mcp') ? 'MCP' : '/v1';
      const what = name.startsWith('submit') ? 'submit' : 'submit to result';
      const graphqlOf = stats.get(name.replace(/ (mcp|\/v1)$/, ' graphql'))!;
      return {
        bench: 'submit',
        measure: `${edge} ${what}, p50`,
        atelier: s.p50,
        baseline: graphqlOf.p50,
        baselineName: `GraphQL ${what}`,
        unit: 'ms',
        higherIsBetter: false,
      };
    }),
);
