import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { testModels } from '../../helpers/generation.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { type ReceivedSpan, startOtlpReceiver } from '../../helpers/otlp-receiver.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { wsClient } from '../../helpers/ws.ts';

// Issue 32 §6, the edges traces.test.ts does not cross: a GraphQL operation over WebSocket is
// a server span in the trace of the handshake's `traceparent`, and an MCP tool call is a span
// inside its `/mcp` request. One server process, spans to an OTLP/HTTP receiver on loopback.

const SERVER = 2;

describe('spans of the WebSocket and MCP edges (issue 32 §6)', () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let database: Database;
  let t: TestApp;
  before(async () => {
    receiver = await startOtlpReceiver();
    database = await createTestDatabase('pglite');
    t = await startTestApp(database, {
      env: {
        MODELS: testModels,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_BSP_SCHEDULE_DELAY: '20', // 20 ms: spans leave at once
      },
    });
  });
  after(async () => {
    await t?.close();
    await database?.close();
    await receiver?.close();
  });

  const inTrace = (traceId: string, name: string) => (spans: readonly ReceivedSpan[]) =>
    spans.find((s) => s.traceId === traceId && s.name === name);

  it('each operation on a socket is a server span under the handshake’s traceparent', async () => {
    const { apiKey } = await seedAccount(t.app);
    const traceId = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const { client } = wsClient(t.url, {
      apiKey,
      headers: { traceparent: `00-${traceId}-${parent}-01` },
    });
    try {
      const answer = await new Promise<unknown>((resolve, reject) => {
        client.subscribe(
          { query: '{ getUserByPrivateId { id } }' },
          { next: resolve, error: reject, complete: () => {} },
        );
      });
      assert.ok((answer as { data?: unknown }).data);
    } finally {
      await client.dispose();
    }
    await receiver.until((spans) => inTrace(traceId, 'graphql-ws operation')(spans) !== undefined);
    const span = inTrace(traceId, 'graphql-ws operation')(receiver.spans)!;
    assert.equal(span.kind, SERVER);
    assert.equal(span.parentSpanId, parent);
  });

  it('an MCP tool call is a span inside its /mcp request', async () => {
    const { account } = await seedAccount(t.app);
    const token = await mcpAccessToken(t, account.id);
    const client = await connectMcpClient(t, token);
    try {
      const listed = await client.callTool({ name: 'list_models', arguments: {} });
      assert.notEqual(listed.isError, true);
    } finally {
      await client.close();
    }
    await receiver.until((spans) => spans.some((s) => s.name === 'tools/call list_models'));
    const call = receiver.spans.find((s) => s.name === 'tools/call list_models')!;
    const request = receiver.spans.find((s) => s.spanId === call.parentSpanId);
    assert.equal(request?.name, 'POST /mcp');
    assert.equal(request?.kind, SERVER);
    assert.equal(request?.traceId, call.traceId);
  });
});
