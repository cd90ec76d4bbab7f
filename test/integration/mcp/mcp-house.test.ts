import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { graphql } from '../../helpers/graphql.ts';
import { connectMcpClient, mcpAccessToken, postMcp } from '../../helpers/mcp.ts';
import { seedAccount } from '../../helpers/seed.ts';

describeEachBackend('/mcp: what the server tells agents, and whose tokens it takes', (backend) => {
  let database: Database;
  let t: TestApp;
  before(async () => {
    database = await createTestDatabase(backend);
    t = await startTestApp(database, {});
  });
  after(async () => {
    await t.close();
    await database.close();
  });

  it('the instructions name every generation tool the server lists, and no kind as future', async () => {
    const { account } = await seedAccount(t.app);
    const client = await connectMcpClient(t, await mcpAccessToken(t, account.id));
    try {
      const instructions = client.getInstructions() ?? '';
      const { tools } = await client.listTools();
      const generators = tools.map((tool) => tool.name).filter((n) => n.startsWith('generate_'));
      assert.deepEqual(generators.sort(), [
        'generate_avatar_video',
        'generate_image',
        'generate_speech',
        'generate_video',
      ]);
      for (const name of generators) assert.ok(instructions.includes(name), name);
      for (const helper of ['list_voice_models', 'list_avatars', 'list_elements'])
        assert.ok(instructions.includes(helper), helper);
      assert.doesNotMatch(instructions, /as models are added/);
    } finally {
      await client.close();
    }
  });

  it('the capabilities promise only what the server sends: no list_changed, no logging', async () => {
    const { account } = await seedAccount(t.app);
    const client = await connectMcpClient(t, await mcpAccessToken(t, account.id));
    try {
      const capabilities = client.getServerCapabilities() ?? {};
      // A stateless server lives for one request: its tool list never changes under a client,
      // and it sends no notifications/tools/list_changed (nor logs, prompts or completions).
      assert.deepEqual(capabilities.tools, { listChanged: false });
      for (const name of ['logging', 'prompts', 'completions'] as const)
        assert.equal(capabilities[name], undefined, name);
      for (const [name, value] of Object.entries(capabilities)) {
        const promises = value as { listChanged?: boolean; subscribe?: boolean };
        assert.notEqual(promises.listChanged, true, `${name}.listChanged`);
        assert.notEqual(promises.subscribe, true, `${name}.subscribe`);
      }
    } finally {
      await client.close();
    }
  });

  it('a token of a suspended or deleted account is refused with the words every edge uses', async () => {
    const post = (token: string) => postMcp(t.url, { authorization: `Bearer ${token}` });
    for (const [status, code] of [
      ['suspended', '100101'],
      ['deleted', '110206'],
    ] as const) {
      const { account, apiKey } = await seedAccount(t.app);
      const token = await mcpAccessToken(t, account.id);
      assert.equal((await post(token)).status, 200, 'the token works while the account is active');
      await t.app.services.accounts.update(account.id, { status });

      const refused = await post(token);
      assert.equal(refused.status, 401);
      const challenge = refused.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /error="invalid_token"/);
      // The GraphQL edge refuses the same account with the same rule's message.
      const viaGraphql = await graphql(t.url, {
        query: '{ getUserByPrivateId { alias } }',
        apiKey,
      });
      const error = viaGraphql.body.errors?.[0];
      assert.equal(error?.extensions?.code, code, status);
      assert.ok(challenge.includes(`error_description="${error?.message}"`), challenge);
    }
  });
});
