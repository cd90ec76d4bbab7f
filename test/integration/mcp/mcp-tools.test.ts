import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { seedAccount } from '../../helpers/seed.ts';

// The tools are one file each with their annotations taken from one set of presets; what a
// client sees must not depend on how they are split. This pins the list, its order and every
// tool's hints as tools/list shows them.

const read = { readOnlyHint: true, destructiveHint: false, idempotentHint: true };
const readFresh = { readOnlyHint: true, destructiveHint: false, idempotentHint: false };
const submit = { readOnlyHint: false, destructiveHint: false, idempotentHint: false };
const destroy = { readOnlyHint: false, destructiveHint: true, idempotentHint: true };

const expected: [string, typeof read][] = [
  ['get_account', read],
  ['list_models', read],
  ['list_elements', read],
  ['estimate_cost', read],
  ['generate_image', submit],
  ['generate_video', submit],
  ['generate_speech', submit],
  ['generate_avatar_video', submit],
  ['get_generation', read],
  ['wait_for_generation', read],
  ['get_download_urls', readFresh],
  ['list_generations', read],
  ['cancel_generation', destroy],
  ['list_voice_models', read],
  ['list_avatars', read],
];

describeEachBackend('MCP tools as tools/list shows them', (backend) => {
  let t: TestApp;
  withTestApp(backend, {}, (started) => {
    ({ t } = started);
  });

  it('tools/list is one page: a cursor is invalid params (-32602), not the list again', async () => {
    const { account } = await seedAccount(t.app);
    const client = await connectMcpClient(t, await mcpAccessToken(t, account.id));
    try {
      const { nextCursor } = await client.listTools();
      assert.equal(nextCursor, undefined);
      for (const cursor of ['not-a-cursor', '']) {
        const refused = await client.listTools({ cursor }).then(
          () => assert.fail(`the cursor "${cursor}" was accepted`),
          (error: { code?: number; data?: unknown }) => error,
        );
        assert.equal(refused.code, -32602, cursor);
        assert.deepEqual(refused.data, { code: '120001', retryable: false, field: 'cursor' });
      }
    } finally {
      await client.close();
    }
  });

  it('every tool, in order, with its title, schemas and annotations', async () => {
    const { account } = await seedAccount(t.app);
    const client = await connectMcpClient(t, await mcpAccessToken(t, account.id));
    try {
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((tool) => [tool.name, tool.annotations]),
        expected.map(([name, hints]) => [name, { ...hints, openWorldHint: false }]),
      );
      for (const tool of tools) {
        assert.ok(tool.title && tool.description, tool.name);
        assert.equal(tool.inputSchema.type, 'object', tool.name);
        assert.equal(tool.outputSchema?.type, 'object', tool.name);
      }
      // The service's rules, not the schemas, bound the values (so both edges answer a bad
      // value alike): the key is offered but optional, and no generation argument carries a
      // range, a length or a list of allowed values.
      for (const tool of tools.filter((t) => /^(generate_|estimate_cost)/.test(t.name))) {
        const properties = tool.inputSchema.properties as Record<string, Record<string, unknown>>;
        if (tool.name !== 'estimate_cost') assert.ok(properties.idempotency_key, tool.name);
        assert.ok(!tool.inputSchema.required?.includes('idempotency_key'), tool.name);
        for (const [name, schema] of Object.entries(properties)) {
          if (name === 'kind') continue;
          const bounds = ['enum', 'minimum', 'maximum', 'minLength', 'maxLength', 'minItems'];
          // (JSON Schema of an integer states the safe-integer range: a type, not a rule.)
          const safe = [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
          assert.deepEqual(
            bounds.filter((b) => b in schema && !safe.includes(schema[b] as number)),
            [],
            `${tool.name}.${name}`,
          );
        }
      }
    } finally {
      await client.close();
    }
  });
});

// A tools/call registers the called tool alone on its request's server; a name that is no
// tool's must still be the SDK's "not found" tool error, not a missing tools/call method.
describeEachBackend('MCP tools/call of a name no tool has', (backend) => {
  let t: TestApp;
  withTestApp(backend, {}, (started) => {
    ({ t } = started);
  });

  it('is a tool error naming the tool, while the real tools still answer', async () => {
    const { account } = await seedAccount(t.app);
    const client = await connectMcpClient(t, await mcpAccessToken(t, account.id));
    try {
      const result = await client.callTool({ name: 'no_such_tool', arguments: {} });
      assert.equal(result.isError, true);
      assert.match(JSON.stringify(result.content), /Tool no_such_tool not found/);
      const own = await client.callTool({ name: 'get_account', arguments: {} });
      assert.notEqual(own.isError, true);
      assert.equal((own.structuredContent as { alias: string }).alias, account.alias);
    } finally {
      await client.close();
    }
  });
});

describe('MCP tool files', () => {
  const dir = new URL('../../../src/edge/mcp/tools/', import.meta.url).pathname;
  const files = readdirSync(dir).filter((name) => name.endsWith('.ts'));

  it('each tool file stays under 200 lines', () => {
    const long = files
      .map((name) => [name, readFileSync(path.join(dir, name), 'utf8').split('\n').length] as const)
      .filter(([, lines]) => lines > 200);
    assert.deepEqual(long, []);
  });

  it('annotations are spelled out in tool.ts only; tools use its presets', () => {
    const spelled = files.filter(
      (name) => name !== 'tool.ts' && /Hint\s*:/.test(readFileSync(path.join(dir, name), 'utf8')),
    );
    assert.deepEqual(spelled, []);
  });
});
