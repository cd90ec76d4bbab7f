import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { SignJWT } from 'jose';
import sharp from 'sharp';
import { FinishCode } from '../../../src/domain/finish-code.ts';
import type { Database } from '../../../src/store/database.ts';
import { startTestApp, type TestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { countContents, testModels } from '../../helpers/generation.ts';
import { graphql } from '../../helpers/graphql.ts';
import { connectMcpClient, mcpAccessToken, postMcp } from '../../helpers/mcp.ts';
import { seedAccount } from '../../helpers/seed.ts';

const clientId = 'atelier-local-tools';

/** The error code of a tool result with isError: JSON details on the text's second line. */
function toolErrorCode(result: object): string {
  const { isError, content } = result as { isError?: boolean; content?: unknown };
  assert.equal(isError, true);
  const [text] = content as { type: string; text: string }[];
  return (JSON.parse(text!.text.split('\n')[1]!) as { error: { code: string } }).error.code;
}
const _redirectUri = 'http://localhost:45999/oauth/callback';

describeEachBackend(
  '/mcp: tools for AI agents behind MCP access tokens (spec §4.2, §5.4)',
  (backend) => {
    let database: Database;
    let t: TestApp;
    before(async () => {
      database = await createTestDatabase(backend);
      t = await startTestApp(database, { env: { MODELS: testModels } });
    });
    after(async () => {
      await t.close();
      await database.close();
    });

    /** An account, and an MCP access token for it obtained through the real OAuth flow. */
    const connected = async () => {
      const seeded = await seedAccount(t.app, { credits: { standard: 20 } });
      return { ...seeded, token: await mcpAccessToken(t, seeded.account.id) };
    };
    const mcpClient = (token: string) => connectMcpClient(t, token);
    const post = (headers: Record<string, string>) => postMcp(t.url, headers);
    const expectedChallenge = () =>
      `Bearer resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp", scope="mcp:access"`;

    it('without a token: 401 with the Bearer challenge naming the resource metadata and scope', async () => {
      const res = await post({});
      assert.equal(res.status, 401);
      assert.equal(res.headers.get('www-authenticate'), expectedChallenge());
    });

    it('refuses an API key, a garbage token and a browser session cookie as bearer credentials', async () => {
      const { apiKey } = await seedAccount(t.app);
      const attempts: Array<Record<string, string>> = [
        { authorization: `Bearer ${apiKey}` },
        { authorization: 'Bearer abc.def.ghi' },
        { cookie: 'atelier_session=whatever' },
      ];
      for (const headers of attempts) {
        const res = await post(headers);
        assert.equal(res.status, 401, JSON.stringify(headers));
        const challenge = res.headers.get('www-authenticate') ?? '';
        assert.ok(challenge.startsWith(expectedChallenge()), challenge);
        if ('authorization' in headers) assert.match(challenge, /error="invalid_token"/);
      }
    });

    it('initialize, tools/list, and a full estimate → generate → wait (with progress) → download', async () => {
      const { token } = await connected();
      const client = await mcpClient(token);
      try {
        assert.equal(client.getServerVersion()?.name, 'atelier');
        assert.match(client.getInstructions() ?? '', /idempotency_key/);
        const { tools } = await client.listTools();
        const names = tools.map((tool) => tool.name).sort();
        for (const name of [
          'get_account',
          'list_models',
          'list_elements',
          'estimate_cost',
          'generate_image',
          'get_generation',
          'wait_for_generation',
          'get_download_urls',
          'list_generations',
          'cancel_generation',
        ]) {
          assert.ok(names.includes(name), name);
        }
        const generate = tools.find((tool) => tool.name === 'generate_image')!;
        // Idempotent only with a key, which is optional: no idempotentHint for a client to trust.
        assert.deepEqual(
          [generate.annotations?.readOnlyHint, generate.annotations?.idempotentHint],
          [false, false],
        );
        assert.ok(generate.outputSchema);

        const account = await client.callTool({ name: 'get_account', arguments: {} });
        assert.deepEqual(
          (account.structuredContent as { credit_balances: unknown }).credit_balances,
          [{ category: 'standard', amount: 20 }],
        );
        const estimate = await client.callTool({
          name: 'estimate_cost',
          arguments: {
            model_id: 'mdl_atelier-sketch',
            prompt: 'a kite',
            width: 512,
            height: 512,
            count: 2,
          },
        });
        assert.equal((estimate.structuredContent as { credits: number }).credits, 2);

        const args = {
          model_id: 'mdl_atelier-sketch',
          prompt: 'a kite over the dunes',
          width: 512,
          height: 512,
          idempotency_key: 'agent-1',
        };
        const submitted = (await client.callTool({ name: 'generate_image', arguments: args }))
          .structuredContent as {
          task_id: string;
          content_id: string;
          credits_charged: number;
          deduplicated: boolean;
        };
        assert.equal(submitted.credits_charged, 1);
        const again = (await client.callTool({ name: 'generate_image', arguments: args }))
          .structuredContent as { content_id: string; deduplicated: boolean };
        assert.deepEqual([again.content_id, again.deduplicated], [submitted.content_id, true]);
        // The balances are read with the token on every request: the charge shows at once.
        const after = await client.callTool({ name: 'get_account', arguments: {} });
        assert.deepEqual(
          (after.structuredContent as { credit_balances: unknown }).credit_balances,
          [{ category: 'standard', amount: 19 }],
        );

        const progress: number[] = [];
        const done = await client.callTool(
          {
            name: 'wait_for_generation',
            arguments: { task_id: submitted.task_id, timeout_seconds: 30 },
          },
          undefined,
          {
            onprogress: (p) => progress.push(p.progress),
          },
        );
        const result = done.structuredContent as {
          status: string;
          finish_code: number;
          media: Array<{ media_id: string; download_url: string; mime_type: string }>;
        };
        assert.deepEqual([result.status, result.finish_code], ['finished', 0]);
        assert.ok(progress.length >= 1, 'progress notifications arrived');
        const download = await fetch(result.media[0]!.download_url);
        assert.equal(download.status, 200);
        assert.equal(download.headers.get('content-type'), result.media[0]!.mime_type);

        // On request, the finished image comes inline too (a small WebP), beside its link.
        const shown = await client.callTool({
          name: 'get_generation',
          arguments: { content_id: submitted.content_id, inline_images: true },
        });
        const items = shown.content as {
          type: string;
          mimeType?: string;
          data?: string;
          uri?: string;
        }[];
        assert.deepEqual(
          items.map((c) => c.type),
          ['text', 'resource_link', 'image'],
        );
        const inline = Buffer.from(items[2]!.data!, 'base64');
        const meta = await sharp(inline).metadata();
        assert.deepEqual(
          [items[2]!.mimeType, meta.format, meta.width, meta.height],
          ['image/webp', 'webp', 512, 512],
        );
        const plain = await client.callTool({
          name: 'get_generation',
          arguments: { content_id: submitted.content_id },
        });
        assert.deepEqual(
          (plain.content as { type: string }[]).map((c) => c.type),
          ['text', 'resource_link'],
        );
      } finally {
        await client.close();
      }
    });

    it('voices, speech, avatars and video: the media tools, with resource links to the results', async () => {
      const { token, apiKey } = await connected();
      const client = await mcpClient(token);
      try {
        const names = (await client.listTools()).tools.map((tool) => tool.name);
        for (const name of [
          'list_voice_models',
          'list_avatars',
          'generate_video',
          'generate_speech',
          'generate_avatar_video',
        ]) {
          assert.ok(names.includes(name), name);
        }
        const voices = (
          await client.callTool({ name: 'list_voice_models', arguments: { language: 'en' } })
        ).structuredContent as { voices: { voice_model_id: string; language: string }[] };
        assert.ok(voices.voices.some((v) => v.voice_model_id === 'voc_en-gb'));
        assert.ok(voices.voices.every((v) => v.language.startsWith('en')));

        const submitted = (
          await client.callTool({
            name: 'generate_speech',
            arguments: {
              model_id: 'mdl_atelier-voice',
              voice_model_id: 'voc_en-gb',
              text: 'Hello from an agent.',
              format: 'mp3',
              idempotency_key: 'speech-1',
            },
          })
        ).structuredContent as { task_id: string; credits_charged: number };
        assert.equal(submitted.credits_charged, 1);
        const done = await client.callTool({
          name: 'wait_for_generation',
          arguments: { task_id: submitted.task_id, timeout_seconds: 30 },
        });
        const result = done.structuredContent as {
          finish_code: number;
          media: { kind: string; mime_type: string; duration_ms: number; download_url: string }[];
        };
        assert.equal(result.finish_code, FinishCode.Ok);
        assert.deepEqual(
          [result.media[0]!.kind, result.media[0]!.mime_type],
          ['audio', 'audio/mpeg'],
        );
        assert.ok(result.media[0]!.duration_ms > 500);
        const link = (done.content as { type: string; uri?: string; mimeType?: string }[]).find(
          (c) => c.type === 'resource_link',
        );
        assert.deepEqual(
          [link?.uri, link?.mimeType],
          [result.media[0]!.download_url, 'audio/mpeg'],
        );
        assert.equal((await fetch(link!.uri!)).status, 200);

        // The avatar tools see only this account's avatars; a foreign one is refused, uncharged.
        const avatars = (await client.callTool({ name: 'list_avatars', arguments: {} }))
          .structuredContent as { avatars: unknown[] };
        assert.deepEqual(avatars.avatars, []);
        const refused = await client.callTool({
          name: 'generate_avatar_video',
          arguments: {
            model_id: 'mdl_atelier-avatar',
            avatar_id: 'ava_someone-else',
            script: 'hi',
            idempotency_key: 'avatar-1',
          },
        });
        assert.equal(refused.isError, true);
        assert.equal(toolErrorCode(refused), '140004');
        const video = await client.callTool({
          name: 'generate_video',
          arguments: {
            model_id: 'mdl_atelier-motion',
            prompt: 'x',
            resolution: '1080p',
            duration_seconds: 10,
            idempotency_key: 'video-1',
          },
        });
        assert.equal(toolErrorCode(video), '120002');
        const balance = await graphql<{
          getUserByPrivateId: { creditBalances: { amount: number }[] };
        }>(t.url, { query: '{ getUserByPrivateId { creditBalances { amount } } }', apiKey });
        assert.equal(balance.body.data!.getUserByPrivateId.creditBalances[0]!.amount, 19);
      } finally {
        await client.close();
      }
    });

    it('a domain error is a tool result with isError and the code, not a protocol error', async () => {
      const { token } = await connected();
      const client = await mcpClient(token);
      try {
        const res = await client.callTool({
          name: 'generate_image',
          arguments: { model_id: 'mdl_atelier-studio', prompt: 'x', idempotency_key: 'k' },
        });
        assert.equal(res.isError, true);
        assert.equal(toolErrorCode(res), '110202');
      } finally {
        await client.close();
      }
    });

    it('a tool that fails unexpectedly answers 190000 with a request id, logged once under it', async () => {
      const { token } = await connected();
      const client = await mcpClient(token);
      // Fault injection: the results service breaks the way a driver would.
      const results = t.app.services.results;
      const listContents = results.listContents;
      results.listContents = async () => {
        throw new Error('connection to 10.0.0.5 lost: driver internals');
      };
      try {
        const res = await client.callTool({ name: 'list_generations', arguments: {} });
        const [text] = res.content as { text: string }[];
        const { error } = JSON.parse(text!.text.split('\n')[1]!) as {
          error: { code: string; request_id: string; message: string };
        };
        assert.equal(error.code, '190000');
        assert.doesNotMatch(text!.text, /10\.0\.0\.5|driver/);
        const logged = t
          .logs()
          .split('\n')
          .filter((line) => line.includes('driver internals'));
        assert.equal(logged.length, 1, 'logged once');
        assert.equal(JSON.parse(logged[0]!).requestId, error.request_id);
      } finally {
        results.listContents = listContents;
        await client.close();
      }
    });

    it('tokens signed by the real key but expired, for another audience or without the scope are refused', async () => {
      const { account } = await seedAccount(t.app);
      const { key, kid } = t.app.oauth.keys.signingKey;
      const now = Math.floor(Date.now() / 1000);
      const mint = (claims: { aud?: string; scope?: string; exp?: number }) =>
        new SignJWT({ client_id: clientId, scope: claims.scope ?? 'mcp:access' })
          .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
          .setIssuer(t.url)
          .setAudience(claims.aud ?? `${t.url}/mcp`)
          .setSubject(account.id)
          .setJti(`test-${Math.random()}`)
          .setIssuedAt(now - 60)
          .setExpirationTime(claims.exp ?? now + 600)
          .sign(key);
      for (const token of [
        await mint({ exp: now - 1 }),
        await mint({ aud: `${t.url}/graphql` }),
        await mint({ aud: 'https://elsewhere.example/mcp' }),
      ]) {
        const res = await post({ authorization: `Bearer ${token}` });
        assert.equal(res.status, 401);
        assert.match(res.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      }
      const scopeless = await post({ authorization: `Bearer ${await mint({ scope: 'profile' })}` });
      assert.equal(scopeless.status, 403);
      assert.match(scopeless.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
      // Valid in every claim but never issued (no stored row): refused as invalid, for it was
      // never revoked.
      const unissued = await post({ authorization: `Bearer ${await mint({})}` });
      assert.equal(unissued.status, 401);
      const challenge = unissued.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /error="invalid_token"/);
      assert.match(challenge, /error_description="The access token is not valid\."/);
      assert.doesNotMatch(challenge, /revoked/);
    });

    it('a revoked connection, a deleted account and a foreign Origin are refused', async () => {
      const first = await connected();
      assert.equal((await post({ authorization: `Bearer ${first.token}` })).status, 200);
      await graphql(t.url, {
        query: `mutation { revokeMcpConnection(clientId: "${clientId}") { clientId } }`,
        apiKey: first.apiKey,
      });
      const revoked = await post({ authorization: `Bearer ${first.token}` });
      assert.equal(revoked.status, 401, 'revoked: refused on the next request');
      assert.match(revoked.headers.get('www-authenticate') ?? '', /The access token was revoked/);

      const second = await connected();
      assert.equal(
        (await post({ authorization: `Bearer ${second.token}`, origin: 'https://evil.example' }))
          .status,
        403,
      );
      await t.app.services.accounts.update(second.account.id, { status: 'deleted' });
      assert.equal((await post({ authorization: `Bearer ${second.token}` })).status, 401);
    });

    it('an answered call carries the headers every response does (security, request id)', async () => {
      const { token } = await connected();
      const res = await post({ authorization: `Bearer ${token}` });
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(
        res.headers.get('content-security-policy'),
        "default-src 'none'; frame-ancestors 'none'",
      );
      assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    });

    it('a JSON-RPC batch is refused whole (400, -32600, id null): none of its tool calls runs', async () => {
      const { token, account } = await connected();
      const client = await mcpClient(token); // negotiates the newest protocol version
      await client.close();
      const call = (i: number) => ({
        jsonrpc: '2.0',
        id: i,
        method: 'tools/call',
        params: {
          name: 'generate_image',
          arguments: {
            model_id: 'mdl_atelier-sketch',
            prompt: `kite ${i}`,
            idempotency_key: `b${i}`,
          },
        },
      });
      for (const version of [undefined, '2025-03-26', '2025-11-25']) {
        const res = await fetch(`${t.url}/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${token}`,
            ...(version === undefined ? {} : { 'mcp-protocol-version': version }),
          },
          body: JSON.stringify([call(1), call(2), call(3)]),
        });
        assert.equal(res.status, 400, String(version));
        const body = (await res.json()) as { id: unknown; error: { code: number } };
        assert.equal(body.id, null);
        assert.equal(body.error.code, -32600);
      }
      assert.equal(await countContents(database, account.id), 0, 'no generation was submitted');
    });

    it('GET and DELETE are 405 for this stateless server; an unsupported protocol version is 400', async () => {
      const { token } = await connected();
      for (const method of ['GET', 'DELETE']) {
        const res = await fetch(`${t.url}/mcp`, {
          method,
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(res.status, 405, method);
      }
      assert.equal(
        (await post({ authorization: `Bearer ${token}`, 'mcp-protocol-version': '1999-01-01' }))
          .status,
        400,
      );
    });
  },
);
