import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
// The MCP SDK's own dependency; the Inspector compiles output schemas with the same major.
import { Ajv } from 'ajv';
import { inputFieldsOf, kindNames } from '../../../src/domain/kinds/kinds.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { gqlOk, testPicture, uploadOk } from '../../helpers/media.ts';
import { lintToolSchemas } from '../../helpers/schema-lint.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 18: what the clients people use check on the tools, run against the real server — the
// MCP Inspector's portability check on every schema, its Ajv compile of every output schema
// (`new Ajv()`, defaults: strict mode logs what it dislikes), and every tool's actual result
// against that schema, as the Inspector and the SDK client validate it — and the names an
// agent reads in all of it, and in the errors, spelled like the arguments: snake_case.

/** A name in camelCase (`idempotencyKey`, `maxCount`), which an agent must not meet over MCP. */
const camelCase = /^[a-z]+[A-Z][A-Za-z]*/;
/** The services' names of the generation arguments, as they would leak into messages. */
const serviceNames = kindNames
  .flatMap((kind) => Object.keys(inputFieldsOf(kind)))
  .filter((name) => camelCase.test(name));

/** Where `value` has a camelCase key, at any depth, and a camelCase `field`. */
function camelCaseNames(value: unknown, at: string, found: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) camelCaseNames(item, `${at}[${i}]`, found);
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (camelCase.test(key)) found.push(`${at}.${key}`);
      if (key === 'field' && typeof item === 'string' && camelCase.test(item))
        found.push(`${at}.field = ${item}`);
      camelCaseNames(item, `${at}.${key}`, found);
    }
  }
  return found;
}

/** Where a JSON Schema names a property in camelCase, at any depth (its keywords aside). */
function camelCaseProperties(schema: unknown, at: string, found: string[]): void {
  if (schema === null || typeof schema !== 'object') return;
  for (const [key, value] of Object.entries(schema)) {
    const names = key === 'properties' && !Array.isArray(schema) ? Object.keys(value ?? {}) : [];
    for (const name of names) if (camelCase.test(name)) found.push(`${at}.${name}`);
    camelCaseProperties(value, `${at}.${key}`, found);
  }
}

/** A tool error's first line and its JSON details (src/edge/mcp/tool-result.ts). */
function errorOf(result: CallToolResult): { line: string; error: Record<string, unknown> } {
  assert.equal(result.isError, true, JSON.stringify(result.content));
  const [text] = result.content;
  const [line, json] = (text?.type === 'text' ? text.text : '').split('\n');
  return { line: line!, error: (JSON.parse(json!) as { error: Record<string, unknown> }).error };
}

/** One call of every tool, with arguments that succeed; later calls use earlier results. */
async function callEveryTool(
  client: Client,
  ids: { avatarId: string },
): Promise<Map<string, CallToolResult>> {
  const results = new Map<string, CallToolResult>();
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
    results.set(name, result);
    return result.structuredContent as Record<string, unknown>;
  };
  const image = { model_id: 'mdl_atelier-sketch', prompt: 'a kite', width: 512, height: 512 };
  await call('get_account');
  await call('list_models');
  await call('list_elements');
  await call('estimate_cost', { kind: 'image', ...image });
  const submitted = await call('generate_image', { ...image, idempotency_key: 'schemas-1' });
  const done = await call('wait_for_generation', { task_id: submitted.task_id });
  assert.equal(done.status, 'finished');
  await call('get_generation', { content_id: submitted.content_id });
  const [media] = done.media as { media_id: string }[];
  await call('get_download_urls', { media_ids: [media!.media_id] });
  await call('list_generations');
  await call('list_voice_models', { language: 'en' });
  await call('list_avatars');
  // The longer kinds are cancelled at once: their answers are what is checked, not their runs.
  const others = {
    generate_video: { model_id: 'mdl_atelier-motion', prompt: 'waves', resolution: '720p' },
    generate_speech: { model_id: 'mdl_atelier-voice', voice_model_id: 'voc_en-us', text: 'Hi.' },
    generate_avatar_video: {
      model_id: 'mdl_atelier-avatar',
      avatar_id: ids.avatarId,
      script: 'Hello.',
    },
  };
  for (const [name, args] of Object.entries(others)) {
    const { task_id } = await call(name, args);
    await call('cancel_generation', { task_id });
  }
  return results;
}

describeEachBackend('what MCP clients check on the tools (issue 18)', (backend) => {
  let t: TestApp;
  withTestApp(backend, {}, (started) => {
    ({ t } = started);
  });

  let client: Client;
  let tools: Tool[];
  let results: Map<string, CallToolResult>;
  let portraitId: string;
  before(async () => {
    const { account, apiKey } = await seedAccount(t.app, { credits: { standard: 1000 } });
    const picture = { kind: 'image', mimeType: 'image/png', bytes: await testPicture() } as const;
    portraitId = await uploadOk(t.url, apiKey, picture);
    const { createAvatar } = await gqlOk<{ createAvatar: { avatarId: string } }>(
      t.url,
      apiKey,
      'mutation A($input: CreateAvatarInput!) { createAvatar(input: $input) { avatarId } }',
      { input: { name: 'Ada', portraitMediaId: portraitId } },
    );
    client = await connectMcpClient(t, await mcpAccessToken(t, account.id));
    ({ tools } = await client.listTools());
    results = await callEveryTool(client, createAvatar);
  });
  after(async () => {
    await client?.close();
  });

  it('the Inspector’s portability check finds nothing in any input or output schema', () => {
    assert.deepEqual(lintToolSchemas(tools), []);
  });

  it('every output schema compiles in the Inspector’s Ajv without a warning; every result matches', () => {
    const warnings: string[] = [];
    const record = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
    const ajv = new Ajv({ logger: { log: () => {}, warn: record, error: record } });
    assert.deepEqual(
      tools.map((tool) => tool.name).filter((name) => !results.has(name)),
      [],
      'a result of every tool',
    );
    for (const tool of tools) {
      assert.ok(tool.outputSchema, tool.name);
      const validate = ajv.compile(tool.outputSchema);
      const result = results.get(tool.name)!;
      assert.ok(
        validate(result.structuredContent),
        `${tool.name}: ${ajv.errorsText(validate.errors)}`,
      );
      // The text a client without structured output reads is the same value.
      const [text] = result.content;
      assert.deepEqual(
        JSON.parse(text?.type === 'text' ? text.text : ''),
        result.structuredContent,
      );
    }
    assert.deepEqual(warnings, []);
  });

  it('every name an agent reads is snake_case: schemas, results, error details and messages', async () => {
    const found: string[] = [];
    for (const tool of tools) {
      camelCaseProperties(tool.inputSchema, `${tool.name} input`, found);
      camelCaseProperties(tool.outputSchema, `${tool.name} output`, found);
      camelCaseNames(results.get(tool.name)?.structuredContent, `${tool.name} result`, found);
    }
    const image = { model_id: 'mdl_atelier-sketch', prompt: 'a kite' };
    const refusals: [string, Record<string, unknown>, string][] = [
      ['generate_image', { ...image, idempotency_key: 'k'.repeat(201) }, 'idempotency_key'],
      ['generate_image', { ...image, idempotency_key: 'schemas-1', seed: 7 }, 'idempotency_key'],
      [
        'generate_image',
        {
          ...image,
          element_ids: ['elm_sun', 'elm_cat', 'elm_house', 'elm_night-sky', 'elm_watercolor'],
        },
        'element_ids',
      ],
      ['generate_image', { ...image, promt_text: 'a typo' }, 'promt_text'],
      ['estimate_cost', { ...image, width: 512, height: 512, count: 9 }, 'count'],
      [
        'generate_avatar_video',
        { model_id: 'mdl_atelier-avatar', avatar_id: 'ava_nope', audio_media_id: portraitId },
        'audio_media_id',
      ],
      ['get_download_urls', { media_ids: [] }, 'media_ids'],
    ];
    for (const [name, args, field] of refusals) {
      const { line, error } = errorOf(
        (await client.callTool({ name, arguments: args })) as CallToolResult,
      );
      assert.equal(error.field, field, `${name}: ${line}`);
      camelCaseNames(error, `${name} error`, found);
      for (const text of [line, String(error.message)])
        for (const serviceName of serviceNames)
          if (text.includes(serviceName)) found.push(`${name} message: ${text}`);
    }
    assert.deepEqual(found, []);
  });

  it('every tool refuses an argument it does not take (120001 naming it), never drops it', async () => {
    // Issue 30 §5: nine tools silently dropped a typo (`list_voice_models {"langauge":"en"}`
    // answered the unfiltered list). Every tool, with its own arguments and one misspelt.
    const valid: Record<string, Record<string, unknown>> = {
      estimate_cost: { kind: 'image', model_id: 'mdl_atelier-sketch', prompt: 'a kite' },
      generate_image: { model_id: 'mdl_atelier-sketch', prompt: 'a kite' },
      generate_video: { model_id: 'mdl_atelier-motion', prompt: 'waves' },
      generate_speech: { model_id: 'mdl_atelier-voice', voice_model_id: 'voc_en-us', text: 'Hi.' },
      generate_avatar_video: { model_id: 'mdl_atelier-avatar', avatar_id: 'ava_x', script: 'Hi.' },
      get_generation: { content_id: 'cnt_x' },
      wait_for_generation: { task_id: 'tsk_x' },
      get_download_urls: { media_ids: ['med_x'] },
      cancel_generation: { task_id: 'tsk_x' },
      list_voice_models: { language: 'en' },
    };
    assert.equal(tools.length, 15);
    for (const tool of tools) {
      const args = { ...(valid[tool.name] ?? {}), langauge: 'en' };
      const { line, error } = errorOf(
        (await client.callTool({ name: tool.name, arguments: args })) as CallToolResult,
      );
      assert.equal(error.code, '120001', `${tool.name}: ${line}`);
      assert.equal(error.field, 'langauge', `${tool.name}: ${line}`);
      const allowed = error.allowed as string[];
      // The generate_* tools and estimate_cost pass a typo to the service, which lists the
      // fields of the kind asked for; every other tool lists exactly its own arguments.
      if (tool.name === 'estimate_cost' || tool.name.startsWith('generate_')) {
        assert.ok(allowed.includes('model_id'), `${tool.name}: ${allowed}`);
      } else {
        assert.deepEqual(allowed, Object.keys(tool.inputSchema.properties ?? {}), tool.name);
      }
    }
  });
});
