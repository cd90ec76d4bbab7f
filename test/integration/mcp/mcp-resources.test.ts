import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, type ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { submitOk, testModels, waitForTask } from '../../helpers/generation.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { remoteImageModel } from '../../helpers/remote-engines.ts';
import { seedAccount } from '../../helpers/seed.ts';
import { OpenAiStandin } from '../../helpers/standins/openai.ts';

const uriOf = (contentId: string) => `atelier://generations/${contentId}`;

/** The JSON-RPC error a request ended with (the SDK's client throws it as McpError). */
async function rpcError(request: Promise<unknown>): Promise<McpError> {
  const error = await request.then(
    () => assert.fail('the request succeeded'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof McpError, String(error));
  return error;
}

/** The generation's JSON, the first item of every read. */
function stateOf<T>(read: ReadResourceResult): T {
  const [first] = read.contents;
  assert.ok(first !== undefined && 'text' in first, 'a text item first');
  assert.equal(first.mimeType, 'application/json');
  return JSON.parse(first.text) as T;
}

describeEachBackend('/mcp resources: the account’s generations', (backend) => {
  // An image model whose server answers a noise PNG of 1024² (about 3 MiB): over the inline limit.
  const standin = new OpenAiStandin('sk-standin-0123456789abcdefABCDEF');
  standin.images = (width, height) =>
    sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
      .png()
      .toBuffer();
  let database: Database;
  let t: TestApp;
  before(async () => {
    await standin.server.listen();
    database = await createTestDatabase(backend);
    const large = remoteImageModel(
      'mdl_noise',
      standin.baseUrl,
      'gpt-image-1',
      { maxOutputBytes: 16 * 2 ** 20 },
      1024,
    );
    t = await startTestApp(database, {
      env: {
        REMOTE_KEY: standin.apiKey,
        MODELS: JSON.stringify([...JSON.parse(testModels), large]),
      },
    });
  });
  after(async () => {
    await t?.close();
    await database?.close();
    await standin.server.close();
  });

  /** An account with an API key (to submit through GraphQL) and a connected MCP client. */
  const connected = async (): Promise<{ apiKey: string; client: Client }> => {
    const { account, apiKey } = await seedAccount(t.app, { credits: { standard: 200 } });
    return { apiKey, client: await connectMcpClient(t, await mcpAccessToken(t, account.id)) };
  };

  it('advertises resources without listChanged or subscribe, and the template to read one', async () => {
    const { client } = await connected();
    try {
      // Nothing is ever sent about changes: the capability promises none.
      assert.deepEqual(client.getServerCapabilities()?.resources, {});
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.deepEqual(
        resourceTemplates.map((r) => [r.uriTemplate, r.mimeType]),
        [['atelier://generations/{content_id}', 'application/json']],
      );
      assert.match(client.getInstructions() ?? '', /atelier:\/\/generations\/\{content_id\}/);
    } finally {
      await client.close();
    }
  });

  it('resources/list: only the caller’s generations, newest first, paged by cursor', async () => {
    const alice = await connected();
    const bob = await connected();
    try {
      const bobs = await submitOk(t.url, bob.apiKey, { modelId: 'mdl_test-fail', prompt: 'bob' });
      const submitted: string[] = [];
      for (let i = 0; i < 22; i++) {
        const { contentId } = await submitOk(t.url, alice.apiKey, {
          modelId: 'mdl_test-fast',
          prompt: `alice ${i}`,
        });
        submitted.push(contentId);
      }

      const first = await alice.client.listResources();
      assert.equal(first.resources.length, 20);
      assert.ok(first.nextCursor, 'a second page');
      const second = await alice.client.listResources({ cursor: first.nextCursor });
      assert.equal(second.nextCursor, undefined, 'the last page');
      const listed = [...first.resources, ...second.resources];
      assert.deepEqual(
        listed.map((r) => r.uri),
        submitted.toReversed().map(uriOf),
      );
      assert.ok(!listed.some((r) => r.uri === uriOf(bobs.contentId)), 'nobody else’s');
      const [newest] = listed;
      assert.equal(newest!.name, submitted.at(-1));
      assert.equal(newest!.mimeType, 'application/json');
      assert.match(newest!.title ?? '', /^image generation, /);
      assert.match(newest!.description ?? '', /^mdl_test-fast, submitted \d{4}-/);
      assert.ok(!Number.isNaN(Date.parse(String(newest!.annotations?.lastModified))));

      // Bob sees his one generation, failed; Alice's cursor does not page his list, nor garbage.
      await waitForTask(t.url, bob.apiKey, bobs.taskId);
      const bobsList = await bob.client.listResources();
      assert.deepEqual(
        bobsList.resources.map((r) => [r.uri, r.title]),
        [[uriOf(bobs.contentId), 'image generation, finished with code 4, refunded']],
      );
      for (const cursor of [first.nextCursor!, 'not-a-cursor']) {
        const error = await rpcError(bob.client.listResources({ cursor }));
        assert.equal(error.code, -32602);
        assert.deepEqual(error.data, { code: '120001', retryable: false, field: 'cursor' });
      }
    } finally {
      await alice.client.close();
      await bob.client.close();
    }
  });

  it('resources/read: get_generation’s JSON, a working fresh link and the image inline', async () => {
    const { apiKey, client } = await connected();
    try {
      const { contentId, taskId } = await submitOk(t.url, apiKey, {
        modelId: 'mdl_atelier-sketch',
        prompt: 'a lighthouse at dusk',
        width: 512,
        height: 512,
      });
      await waitForTask(t.url, apiKey, taskId);

      const uri = uriOf(contentId);
      const { contents } = await client.readResource({ uri });
      assert.equal(contents.length, 2, 'the JSON, then the image');
      const [json, image] = contents as [
        { uri: string; mimeType: string; text: string },
        { uri: string; mimeType: string; blob: string },
      ];
      assert.deepEqual([json.uri, json.mimeType], [uri, 'application/json']);
      const state = JSON.parse(json.text) as {
        content_id: string;
        status: string;
        finish_code: number;
        media: { media_id: string; mime_type: string; download_url: string }[];
      };
      // The same fields and values as the get_generation tool, links and cursor aside (each
      // sealed anew).
      const tool = await client.callTool({
        name: 'get_generation',
        arguments: { content_id: contentId },
      });
      const withoutLinks = (value: unknown) =>
        JSON.parse(JSON.stringify(value), (key, v) =>
          key === 'download_url' || key === 'expires_at' || key === 'cursor' ? undefined : v,
        );
      assert.deepEqual(withoutLinks(state), withoutLinks(tool.structuredContent));
      assert.deepEqual(
        [state.content_id, state.status, state.finish_code],
        [contentId, 'finished', 0],
      );

      const [media] = state.media;
      const download = await fetch(media!.download_url);
      assert.equal(download.status, 200);
      assert.equal(download.headers.get('content-type'), 'image/png');
      const file = Buffer.from(await download.arrayBuffer());
      assert.deepEqual([image.uri, image.mimeType], [media!.download_url, 'image/png']);
      assert.ok(Buffer.from(image.blob, 'base64').equals(file), 'the inline bytes are the file');
    } finally {
      await client.close();
    }
  });

  it('a generation with no finished image reads as its JSON alone', async () => {
    const { apiKey, client } = await connected();
    try {
      // Still running (the slow fake engine takes seconds): no file yet.
      const slow = await submitOk(t.url, apiKey, { modelId: 'mdl_test-slow', prompt: 'slow' });
      const pending = await client.readResource({ uri: uriOf(slow.contentId) });
      assert.equal(pending.contents.length, 1);
      const state = stateOf<{
        status: string;
        media: unknown[];
      }>(pending);
      assert.notEqual(state.status, 'finished');
      assert.deepEqual(state.media, []);

      // Finished, but speech: the JSON with its link, no file inline.
      const speech = (
        await client.callTool({
          name: 'generate_speech',
          arguments: {
            model_id: 'mdl_atelier-voice',
            voice_model_id: 'voc_en-gb',
            text: 'Nothing to inline.',
          },
        })
      ).structuredContent as { content_id: string; task_id: string };
      await waitForTask(t.url, apiKey, speech.task_id);
      const done = await client.readResource({ uri: uriOf(speech.content_id) });
      assert.equal(done.contents.length, 1);
      const spoken = stateOf<{
        finish_code: number;
        media: { mime_type: string }[];
      }>(done);
      assert.equal(spoken.finish_code, FinishCode.Ok);
      assert.match(spoken.media[0]!.mime_type, /^audio\//);

      // An image over 1 MiB: its link in the JSON, not its bytes.
      const large = await submitOk(t.url, apiKey, {
        modelId: 'mdl_noise',
        prompt: 'noise',
        width: 1024,
        height: 1024,
      });
      await waitForTask(t.url, apiKey, large.taskId);
      const read = await client.readResource({ uri: uriOf(large.contentId) });
      assert.equal(read.contents.length, 1);
      const noise = stateOf<{
        finish_code: number;
        media: { download_url: string }[];
      }>(read);
      assert.equal(noise.finish_code, FinishCode.Ok);
      const file = await fetch(noise.media[0]!.download_url);
      assert.ok((await file.arrayBuffer()).byteLength > 1024 * 1024, 'over the limit indeed');
    } finally {
      await client.close();
    }
  });

  it('another account’s generation is refused exactly like one that does not exist', async () => {
    const alice = await connected();
    const bob = await connected();
    try {
      const { contentId } = await submitOk(t.url, alice.apiKey, {
        modelId: 'mdl_test-fast',
        prompt: 'private',
      });
      const unknownId = `cnt_${'x'.repeat(contentId.length - 4)}`;
      const foreign = await rpcError(bob.client.readResource({ uri: uriOf(contentId) }));
      const unknown = await rpcError(bob.client.readResource({ uri: uriOf(unknownId) }));
      for (const error of [foreign, unknown]) {
        assert.equal(error.code, -32602);
        assert.deepEqual(error.data, { code: '140004', retryable: false, field: 'uri' });
      }
      assert.equal(
        foreign.message.replace(contentId, 'ID'),
        unknown.message.replace(unknownId, 'ID'),
      );
      // The owner reads it.
      const own = await alice.client.readResource({ uri: uriOf(contentId) });
      assert.equal(own.contents[0]!.uri, uriOf(contentId));
    } finally {
      await alice.client.close();
      await bob.client.close();
    }
  });

  it('a URI that is not a generation’s is a clear error', async () => {
    const { client } = await connected();
    try {
      for (const uri of [
        'atelier://generations/',
        'atelier://generations/cnt_a/media',
        'atelier://avatars/ava_a',
        `${t.url}/mcp`,
        'no uri at all',
      ]) {
        const error = await rpcError(client.readResource({ uri }));
        assert.equal(error.code, -32602, uri);
        assert.deepEqual(error.data, { code: '120001', retryable: false, field: 'uri' }, uri);
        assert.match(
          error.message,
          /generations are read as atelier:\/\/generations\/\{content_id\}/,
        );
      }
    } finally {
      await client.close();
    }
  });
});
