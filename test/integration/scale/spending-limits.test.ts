import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { postgresUrl } from '../../helpers/backends.ts';
import { atelier, type RunningServer, startServer } from '../../helpers/cli.ts';
import { createEmptyPostgresDatabase } from '../../helpers/database.ts';
import { balances, fakeModel, generateImage } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';

// Issue 21: a key's limit is enforced in the statement that debits, so submissions racing on
// two API processes cannot spend past it. The model costs 1 credit, the key may spend 10 a day.

const models = JSON.stringify([
  { ...fakeModel('mdl_one-credit', {}), pricing: { unit: 'image', credits: 1, category: null } },
]);

describe('a spending limit under concurrent submissions on two API processes [postgres: processes]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  const processes: RunningServer[] = [];
  const dataDirs: string[] = [];
  let drop: () => Promise<void>;
  let env: Record<string, string>;
  const dataDir = () => {
    dataDirs.push(mkdtempSync(path.join(tmpdir(), 'atelier-limits-')));
    return dataDirs.at(-1)!;
  };
  before(async () => {
    const created = await createEmptyPostgresDatabase();
    drop = created.drop;
    env = { DATABASE_URL: created.url, MODELS: models, WORKER_CONCURRENCY: '0' };
    assert.equal((await atelier(['migrate'], { ...env, DATA_DIR: dataDir() })).code, 0);
  });
  after(async () => {
    for (const p of processes) await p.stop();
    await drop?.();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it('20 submissions at once on a key limited to 10 credits a day: exactly 10 are charged', async () => {
    const cli = { ...env, DATA_DIR: dataDir() };
    const account = JSON.parse(
      (
        await atelier(
          [
            'account',
            'create',
            '--alias',
            'limited',
            '--api-key-access',
            '--credits',
            'standard=100',
          ],
          cli,
        )
      ).stdout,
    ) as { id: string };
    const ownerKey = (
      JSON.parse((await atelier(['apikey', 'create', '--account', account.id], cli)).stdout) as {
        secret: string;
      }
    ).secret;
    const apis = await Promise.all([0, 1].map(() => startServer({ ...env, DATA_DIR: dataDir() })));
    processes.push(...apis);

    const created = await graphql<{ createApiKey: { secret: string; apiKey: { id: string } } }>(
      apis[0]!.url,
      {
        query: `mutation C($input: CreateApiKeyInput!) {
            createApiKey(input: $input) { secret apiKey { id } }
          }`,
        variables: {
          input: {
            name: 'agent',
            limits: { credits: [{ category: 'standard', period: 'day', credits: 10 }] },
          },
        },
        apiKey: ownerKey,
      },
    );
    assert.deepEqual(errorCodes(created), [], JSON.stringify(created.body.errors));
    const limited = created.body.data!.createApiKey.secret;

    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        generateImage(apis[i % 2]!.url, limited, { modelId: 'mdl_one-credit', prompt: `n${i}` }),
      ),
    );
    const accepted = answers.filter((a) => errorCodes(a).length === 0);
    const refused = answers.filter((a) => errorCodes(a).length > 0);
    assert.equal(accepted.length, 10);
    for (const answer of refused) {
      assert.deepEqual(errorCodes(answer), ['130001'], JSON.stringify(answer.body.errors));
      assert.equal(answer.body.errors![0]!.extensions!.reason, 'spending_limit');
      assert.equal(answer.body.errors![0]!.extensions!.charged, false);
    }
    assert.deepEqual(await balances(apis[1]!.url, ownerKey), { standard: 90 });
    const listed = await graphql<{
      listApiKeys: { id: string; limits: { credits: { spent: number; remaining: number }[] } }[];
    }>(apis[1]!.url, {
      query: '{ listApiKeys { id limits { credits { spent remaining } } } }',
      apiKey: ownerKey,
    });
    const agent = listed.body.data!.listApiKeys.find(
      (k) => k.id === created.body.data!.createApiKey.apiKey.id,
    );
    assert.deepEqual(agent!.limits.credits, [{ spent: 10, remaining: 0 }]);
  });
});
