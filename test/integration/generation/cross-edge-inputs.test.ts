import assert from 'node:assert/strict';
import { before, it } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { inputFieldsOf } from '../../../src/domain/kinds/kinds.ts';
import type { Database } from '../../../src/store/database.ts';
import { type TestApp, withTestApp } from '../../helpers/app.ts';
import { describeEachBackend } from '../../helpers/backends.ts';
import { balances, countContents } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';
import { connectMcpClient, mcpAccessToken } from '../../helpers/mcp.ts';
import { gqlOk, testPicture, testTone, uploadOk } from '../../helpers/media.ts';
import { seedAccount } from '../../helpers/seed.ts';

// Issue 16: GraphQL and MCP give the same answer for the same bad input — the catalogue code,
// the field and `allowed` — never a transport-level schema error for a domain rule. A row is
// written once, in GraphQL's camelCase, as the one change that spoils a valid input of its
// kind; the MCP call is derived from it, and so is the MCP answer: the same, with every name
// snake_case as the tools' arguments are (issue 18). No row passes an idempotency key: it is optional on
// both edges. Type errors (a string for an Int) stay transport-level on both edges and are not
// rows.

type Kind = 'image' | 'video' | 'speech' | 'avatar';
/** A submission of the kind, or an estimate of it (`estimateCost` / `estimate_cost`). */
type Operation = Kind | `estimate ${Kind}`;
/** name, operation, the change to the valid input, expected code and field, and `allowed`. */
type Row = readonly [string, Operation, Record<string, unknown>, string, string, unknown?];

// IDs that exist once the suite has uploaded them; inputs name them by these tokens.
const avatar = '<avatar>';
const audio = '<audio>';

/** A valid input of each kind on the built-in models; each row spoils one thing in it. */
const valid: Record<Kind, Record<string, unknown>> = {
  image: { modelId: 'mdl_atelier-sketch', prompt: 'a quiet harbour', width: 512, height: 512 },
  video: { modelId: 'mdl_atelier-motion', prompt: 'waves', resolution: '720p' },
  speech: { modelId: 'mdl_atelier-voice', voiceModelId: 'voc_en-us', text: 'Hello there.' },
  avatar: { modelId: 'mdl_atelier-avatar', avatarId: avatar, script: 'Hello there.' },
};
const fiveElements = ['elm_sun', 'elm_cat', 'elm_house', 'elm_night-sky', 'elm_watercolor'];
const imageFormats = ['png', 'jpeg', 'webp'];
const speechFormats = ['mp3', 'wav', 'ogg'];
const speedRange = { min: 0.5, max: 2 };
const maxElements = { maxElements: 4 };
const seconds720p = { min: 1, max: 10 };
const resolutions = ['512p', '720p'];
/** A field the kind does not take is named, with the kind's fields as what is allowed. */
const imageFields = Object.keys(inputFieldsOf('image'));
const speechFields = Object.keys(inputFieldsOf('speech'));
const argumentNames = new Set(
  (['image', 'video', 'speech', 'avatar'] as const).flatMap((kind) =>
    Object.keys(inputFieldsOf(kind)),
  ),
);

const rows: readonly Row[] = [
  ['format gif', 'image', { format: 'gif' }, '120002', 'format', imageFormats],
  ['count 0', 'image', { count: 0 }, '120001', 'count'],
  ['width without height', 'image', { height: undefined }, '120002', 'height'],
  ['a blank prompt', 'image', { prompt: '   ' }, '120001', 'prompt'],
  ['seed -1', 'image', { seed: -1 }, '120001', 'seed'],
  ['a 201-character key', 'image', { idempotencyKey: 'k'.repeat(201) }, '120001', 'idempotencyKey'],
  ['an unknown model', 'image', { modelId: 'mdl_nope' }, '140004', 'modelId'],
  ['a video model', 'image', { modelId: 'mdl_atelier-motion' }, '120001', 'modelId'],
  ['five elements', 'image', { elementIds: fiveElements }, '120002', 'elementIds', maxElements],
  ['11 s at 720p', 'video', { durationSeconds: 11 }, '120002', 'durationSeconds', seconds720p],
  ['25 fps', 'video', { fps: 25 }, '120002', 'fps', [24, 30]],
  ['format flac', 'speech', { format: 'flac' }, '120002', 'format', speechFormats],
  ['speed 50', 'speech', { speed: 50 }, '120002', 'speed', speedRange],
  ['a script and an audio', 'avatar', { audioMediaId: audio }, '120001', 'script'],
  ['resolution 4k', 'avatar', { resolution: '4k' }, '120002', 'resolution', resolutions],
  ['count 9 at 512x512', 'estimate image', { count: 9 }, '120002', 'count', { maxCount: 4 }],
  ['a video field', 'estimate image', { durationSeconds: 5 }, '120001', 'durationSeconds'],
  ['25 fps', 'estimate video', { fps: 25 }, '120002', 'fps', [24, 30]],
  ['speed 50', 'estimate speech', { speed: 50 }, '120002', 'speed', speedRange],
  ['an image field', 'estimate speech', { prompt: 'a harbour' }, '120001', 'prompt', speechFields],
  ['a typo', 'estimate image', { coutn: 2 }, '120001', 'coutn', imageFields],
  [
    'a 201-character key',
    'estimate video',
    { idempotencyKey: 'k'.repeat(201) },
    '120001',
    'idempotencyKey',
  ],
  ['resolution 4k', 'estimate avatar', { resolution: '4k' }, '120002', 'resolution', resolutions],
];

/** The generation's name on GraphQL (`generateAvatarVideo`); MCP's is its snake_case. */
const names: Record<Kind, string> = {
  image: 'Image',
  video: 'Video',
  speech: 'Speech',
  avatar: 'AvatarVideo',
};

/** The kind an operation is about, and whether it is an estimate. */
function parse(operation: Operation): { kind: Kind; estimate: boolean } {
  const [word, kind] = operation.split(' ');
  return kind === undefined
    ? { kind: word as Kind, estimate: false }
    : { kind: kind as Kind, estimate: true };
}

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** What an operation asks on each edge, with the same camelCase `input`. */
function requests(operation: Operation, input: Record<string, unknown>) {
  const args = Object.fromEntries(Object.entries(input).map(([k, v]) => [snakeCase(k), v]));
  const { kind, estimate } = parse(operation);
  if (estimate) {
    return {
      graphql: {
        query: 'query E($input: CostEstimateInput!) { estimateCost(input: $input) { credits } }',
        variables: { input: { kind, input } },
      },
      mcp: { name: 'estimate_cost', arguments: { kind, ...args } },
    };
  }
  const name = names[kind];
  return {
    graphql: {
      query: `mutation G($input: Generate${name}Input!) { generate${name}(input: $input) { contentId } }`,
      variables: { input },
    },
    mcp: { name: `generate${snakeCase(name)}`, arguments: args },
  };
}

/** What an answer says of its error, to compare edges; anything else shows as `other`. */
interface Seen {
  code?: unknown;
  field?: unknown;
  allowed?: unknown;
  other?: string;
}

function seen({ code, field, allowed }: Record<string, unknown>): Seen {
  return allowed === undefined ? { code, field } : { code, field, allowed };
}

/** A GraphQL answer as MCP spells it: `field`, keys and the argument names `allowed` lists. */
function overMcp({ code, field, allowed }: Seen): Seen {
  const spell = (value: unknown): unknown => {
    if (typeof value === 'string') return argumentNames.has(value) ? snakeCase(value) : value;
    if (Array.isArray(value)) return value.map(spell);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [snakeCase(k), spell(v)]));
  };
  return seen({ code, field: snakeCase(String(field)), allowed: spell(allowed) });
}

/** A tool error's details: JSON on the second line of its text (src/edge/mcp/tool-result.ts). */
function toolError(result: CallToolResult): Seen {
  const [first] = result.content;
  const text = first?.type === 'text' ? first.text : JSON.stringify(result);
  const details = text.split('\n')[1];
  if (result.isError !== true || !details?.startsWith('{"error"')) return { other: text };
  return seen((JSON.parse(details) as { error: Record<string, unknown> }).error);
}

describeEachBackend('the same bad generation input over GraphQL and MCP (issue 16)', (backend) => {
  let database: Database;
  let t: TestApp;
  // No workers: nothing here may be queued, and nothing runs.
  withTestApp(backend, { env: { WORKER_CONCURRENCY: '0' } }, (started) => {
    ({ database, t } = started);
  });

  let user: { accountId: string; apiKey: string; token: string; ids: Record<string, string> };
  // One account for every row: an avatar and an audio of its own, an API key, an MCP token.
  before(async () => {
    const { account, apiKey } = await seedAccount(t.app, { credits: { standard: 100 } });
    const picture = { kind: 'image', mimeType: 'image/png', bytes: await testPicture() } as const;
    const { createAvatar } = await gqlOk<{ createAvatar: { avatarId: string } }>(
      t.url,
      apiKey,
      'mutation A($input: CreateAvatarInput!) { createAvatar(input: $input) { avatarId } }',
      { input: { name: 'Ada', portraitMediaId: await uploadOk(t.url, apiKey, picture) } },
    );
    const sound = { kind: 'audio', mimeType: 'audio/wav', bytes: await testTone(1) } as const;
    user = {
      accountId: account.id,
      apiKey,
      token: await mcpAccessToken(t, account.id),
      ids: { [avatar]: createAvatar.avatarId, [audio]: await uploadOk(t.url, apiKey, sound) },
    };
  });

  /** The valid input of `kind` with `change`: tokens replaced, `undefined` fields left out. */
  const inputOf = (kind: Kind, change: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries({ ...valid[kind], ...change })
        .filter(([, value]) => value !== undefined)
        .map(([k, v]) => [k, typeof v === 'string' ? (user.ids[v] ?? v) : v]),
    );

  /** Both edges asked the same, as the account: the GraphQL answer and the tool result. */
  const ask = async (operation: Operation, input: Record<string, unknown>) => {
    const request = requests(operation, input);
    const res = await graphql(t.url, { ...request.graphql, apiKey: user.apiKey });
    const client = await connectMcpClient(t, user.token);
    try {
      return { res, result: (await client.callTool(request.mcp)) as CallToolResult };
    } finally {
      await client.close();
    }
  };

  it('the valid inputs the rows start from are estimated on both edges', async () => {
    const answers: Record<string, unknown> = {};
    for (const kind of Object.keys(valid) as Kind[]) {
      const { res, result } = await ask(`estimate ${kind}`, inputOf(kind, {}));
      const extensions = res.body.errors?.[0]?.extensions;
      answers[kind] = {
        graphql: extensions === undefined ? 'ok' : seen(extensions),
        mcp: result.isError === true ? toolError(result) : 'ok',
      };
    }
    const ok = { graphql: 'ok', mcp: 'ok' };
    assert.deepEqual(answers, { image: ok, video: ok, speech: ok, avatar: ok });
  });

  it('over MCP, an argument a generate tool does not take is named, not dropped', async () => {
    // GraphQL refuses an unknown input field before anything runs (a schema rule of its own);
    // MCP has no such check, so the service names it, with the same code as an estimate.
    const client = await connectMcpClient(t, user.token);
    try {
      const args = { model_id: 'mdl_atelier-sketch', prompt: 'a harbour', promt: 'typo' };
      const result = (await client.callTool({
        name: 'generate_image',
        arguments: args,
      })) as CallToolResult;
      assert.deepEqual(toolError(result), {
        code: '120001',
        field: 'promt',
        allowed: imageFields.map(snakeCase),
      });
      assert.equal(await countContents(database, user.accountId), 0, 'nothing created');
    } finally {
      await client.close();
    }
  });

  for (const [name, operation, change, code, field, allowed] of rows) {
    it(`${operation}, ${name}: ${code} on ${field}, the same on both edges`, async () => {
      const held = await balances(t.url, user.apiKey);
      const { kind } = parse(operation);
      const { res, result } = await ask(operation, inputOf(kind, change));

      const extensions = res.body.errors?.[0]?.extensions;
      const overGraphql = extensions ? seen(extensions) : { other: JSON.stringify(res.body) };
      const expected = seen({ code, field, allowed: allowed ?? overGraphql.allowed });
      assert.deepEqual(
        { graphql: overGraphql, mcp: toolError(result) },
        { graphql: expected, mcp: overMcp(expected) },
      );
      assert.deepEqual(errorCodes(res), [code], 'one error over GraphQL');
      assert.deepEqual(await balances(t.url, user.apiKey), held, 'nothing charged');
      assert.equal(await countContents(database, user.accountId), 0, 'nothing created');
    });
  }
});
