import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateApiKey } from '../../../src/auth/api-key.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import { atelier, type RunningServer, startServer } from '../../helpers/cli.ts';
import { createEmptyPostgresDatabase } from '../../helpers/database.ts';
import { FaultyRelay } from '../../helpers/faulty-relay.ts';
import { generateImage, testModels } from '../../helpers/generation.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';

// Issue 30 §7: a stalled database (a frozen server, a dropped route: no error, no end) held
// requests on existing connections forever; only new connections timed out, after 10 s. Every
// statement is bounded now (DATABASE_TIMEOUT_MS), so a request answers 100102 (or 190000) while
// the database is still stalled, as during a cut, and the service recovers by itself. A real
// `bin/atelier serve` talks to PostgreSQL through a relay that holds every byte.

const me = '{ getUserByPrivateId { id } }';

describe('a stalled PostgreSQL [relay, serve process]', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  let database: Awaited<ReturnType<typeof createEmptyPostgresDatabase>>;
  let relay: FaultyRelay;
  let api: RunningServer;
  let apiKey: string;
  let dataDir: string;
  before(async () => {
    database = await createEmptyPostgresDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-stall-'));
    const direct = { DATABASE_URL: database.url, DATA_DIR: dataDir };
    assert.equal((await atelier(['migrate'], direct)).code, 0);
    const account = JSON.parse(
      (
        await atelier(
          [
            'account',
            'create',
            '--alias',
            'stall',
            '--api-key-access',
            '--credits',
            'standard=100',
          ],
          direct,
        )
      ).stdout,
    ) as { id: string };
    apiKey = (
      JSON.parse((await atelier(['apikey', 'create', '--account', account.id], direct)).stdout) as {
        secret: string;
      }
    ).secret;
    relay = await FaultyRelay.start(database.url);
    api = await startServer({
      DATABASE_URL: relay.url,
      DATA_DIR: dataDir,
      MODELS: testModels,
      WORKER_CONCURRENCY: '0',
      DATABASE_TIMEOUT_MS: '1000',
    });
  });
  after(async () => {
    await api?.stop();
    await relay?.close();
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('requests are answered while it is stalled, and work again once it answers', async () => {
    assert.deepEqual(errorCodes(await graphql(api.url, { query: me, apiKey })), []);
    relay.stall();
    try {
      // Each of these comes back while every byte to and from PostgreSQL is held.
      const logBefore = api.stdout().length;
      const answers = await Promise.all([
        graphql(api.url, { query: me, apiKey }),
        generateImage(api.url, apiKey, { modelId: 'mdl_test-fast', prompt: 'during a stall' }),
        // A key the server has not seen: it cannot be checked, which says nothing against it.
        graphql(api.url, { query: me, apiKey: generateApiKey().secret }),
        ...Array.from({ length: 12 }, () => graphql(api.url, { query: me, apiKey })),
      ]);
      for (const answer of answers) {
        assert.deepEqual(errorCodes(answer), ['100102'], JSON.stringify(answer.body));
        const [error] = answer.body.errors!;
        assert.equal(error!.extensions!.retryable, true);
      }
      assert.equal(answers[1]!.body.errors![0]!.extensions!.charged, false, 'nothing was sent');
      // An expected outage is a line, then a count: not a stack trace per request.
      const lines = api
        .stdout()
        .slice(logBefore)
        .split('\n')
        .filter((l) => l !== '');
      assert.ok(lines.length <= 4, lines.join('\n'));
      for (const line of lines) assert.doesNotMatch(line, /"stack"|\n\s+at /, line);
    } finally {
      relay.resume();
    }
    // Without a restart: fresh connections replace the ones that went silent.
    assert.deepEqual(errorCodes(await graphql(api.url, { query: me, apiKey })), []);
    const after = await generateImage(api.url, apiKey, {
      modelId: 'mdl_test-fast',
      prompt: 'after',
    });
    assert.deepEqual(errorCodes(after), []);
  });
});
