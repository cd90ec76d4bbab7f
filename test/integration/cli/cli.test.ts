import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { restrictToOwner } from '../../../src/store/data-dir-modes.ts';
import { postgresUrl } from '../../helpers/backends.ts';
import { atelier, startServer } from '../../helpers/cli.ts';
import { createEmptyPostgresDatabase } from '../../helpers/database.ts';
import { errorCodes, graphql } from '../../helpers/graphql.ts';

const me = '{ getUserByPrivateId { id alias creditBalances { category amount } } }';

function tempDataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'atelier-cli-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Every migration, in order: what `migrate` applies to an empty PostgreSQL database. */
const allMigrations = [
  '0001-foundation',
  '0002-generations',
  '0003-identities',
  '0004-oauth',
  '0005-library',
  '0006-rate-limits',
  '0007-running-by-account',
  '0008-pending-uploads',
  '0009-engine-checkpoints',
  '0010-idp-issuer',
  '0011-claim-function',
  '0012-spending-limits',
  '0013-task-event-log',
  '0014-webhooks',
  '0015-revoked-codes',
  '0016-backend-pools',
  '0017-operating',
  '0018-usage-report',
  '0019-trace-context',
  '0020-content-deletion',
  '0021-finish-then-claim',
];

describe('bin/atelier on the embedded database', () => {
  // Every case starts from its own copy of the directory `migrate` left: an empty database, as
  // after an operator's `atelier migrate`. A new data directory is a copy of the embedded
  // database's template, which holds every migration already, so there is nothing to apply.
  let template = '';
  before(async () => {
    template = mkdtempSync(path.join(tmpdir(), 'atelier-cli-template-'));
    const migrated = await atelier(['migrate'], { DATA_DIR: template });
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.deepEqual(JSON.parse(migrated.stdout), { applied: [] });
  });
  after(() => rmSync(template, { recursive: true, force: true }));
  /** A data directory holding an empty, migrated database of its own. */
  const migratedDataDir = () => {
    const dir = tempDataDir();
    cpSync(template, dir, { recursive: true });
    restrictToOwner(dir); // cpSync's directories follow this process's umask, not the source
    return dir;
  };

  it('first run of serve creates admin with 1,000 standard credits and prints a working key once', async () => {
    const env = { DATA_DIR: tempDataDir() };
    // PUBLIC_URL spelled unlike the bound 127.0.0.1, so the banner's choice is visible.
    const server = await startServer(env, { publicHost: 'localhost' });
    let restarted: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      // Issue 18: the first address printed, the one to give clients, is PUBLIC_URL.
      // No URL in it spells the bound socket, which an agent would fail discovery with.
      const publicUrl = `http://localhost:${new URL(server.url).port}`;
      const banner = server.stderr().slice(server.stderr().indexOf('Atelier is ready.'));
      assert.ok(
        banner.startsWith(
          `Atelier is ready. Give clients this address (PUBLIC_URL): ${publicUrl}\n`,
        ),
        banner,
      );
      assert.ok(banner.includes(`  MCP:     ${publicUrl}/mcp `), banner);
      assert.deepEqual(
        [...new Set(banner.match(/https?:\/\/[^/\s]+/g))],
        [publicUrl],
        'every URL of the banner is on PUBLIC_URL',
      );
      const key = /svc_[A-Za-z0-9]{32}/.exec(server.stderr())?.[0];
      assert.ok(key, server.stderr());
      // The first-run sign-in works with the built-in identity provider.
      const signInPassword = /as admin@localhost with the password \(shown once\):\s+(\S+)/.exec(
        server.stderr(),
      )?.[1];
      assert.ok(signInPassword, server.stderr());
      const signedIn = await fetch(`${server.url}/idp/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'admin@localhost', password: signInPassword }),
      });
      assert.equal(signedIn.status, 200);
      const res = await graphql<{ getUserByPrivateId: { alias: string; creditBalances: unknown } }>(
        server.url,
        {
          query: me,
          apiKey: key,
        },
      );
      assert.equal(res.body.data?.getUserByPrivateId.alias, 'admin');
      assert.deepEqual(res.body.data?.getUserByPrivateId.creditBalances, [
        { category: 'standard', amount: 1000 },
      ]);

      // While the server holds the data directory, operator commands run in it (issue 20);
      // `migrate`, which a running server has done, still says clearly who holds it.
      const viaServer = await atelier(['account', 'create', '--alias', 'bob'], env);
      assert.equal(viaServer.code, 0, viaServer.stderr);
      assert.equal((JSON.parse(viaServer.stdout) as { alias: string }).alias, 'bob');
      const blocked = await atelier(['migrate'], env);
      assert.equal(blocked.code, 1);
      assert.match(blocked.stderr, /in use by a running Atelier process \(pid \d+\)/);

      assert.equal(await server.stop(), 0, `SIGTERM exits cleanly:\n${server.stderr()}`);
      assert.equal(
        existsSync(path.join(env.DATA_DIR, 'atelier.lock')),
        false,
        'the lock is released',
      );

      restarted = await startServer(env);
      assert.doesNotMatch(restarted.stderr(), /First run|svc_/, 'the key is printed once only');
      assert.equal(
        (await graphql(restarted.url, { query: me, apiKey: key })).status,
        200,
        'data persisted',
      );
    } finally {
      await server.stop();
      await restarted?.stop();
    }
  });

  it('operator commands print JSON and change what the API shows', async () => {
    // A second category, which exists once CREDIT_CATEGORIES names it.
    const env = { DATA_DIR: migratedDataDir(), CREDIT_CATEGORIES: 'standard,video' };
    const created = await atelier(
      [
        'account',
        'create',
        '--alias',
        'studio',
        '--credits',
        'standard=40',
        '--credits',
        'video=5',
        '--api-key-access',
      ],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const account = JSON.parse(created.stdout) as {
      id: string;
      alias: string;
      apiKeyAccess: boolean;
    };
    assert.match(account.id, /^acc_/);
    assert.equal(account.apiKeyAccess, true);

    const granted = await atelier(
      ['account', 'grant', '--account', account.id, '--category', 'standard', '--amount', '60'],
      env,
    );
    assert.deepEqual(JSON.parse(granted.stdout), { category: 'standard', amount: 100 });

    const key = await atelier(
      ['apikey', 'create', '--account', account.id, '--name', 'ci', '--expires-in', '30d'],
      env,
    );
    assert.equal(key.code, 0, key.stderr);
    const { secret, apiKey } = JSON.parse(key.stdout) as {
      secret: string;
      apiKey: { expiresAt: string };
    };
    assert.match(secret, /^svc_[A-Za-z0-9]{32}$/);
    const days = (Date.parse(apiKey.expiresAt) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);

    const user = await atelier(
      [
        'idp',
        'user',
        'add',
        '--account',
        account.id,
        '--email',
        'studio@example.test',
        '--password-stdin',
      ],
      env,
      'a long enough password\n',
    );
    assert.equal(user.code, 0, user.stderr);
    const added = JSON.parse(user.stdout) as { id: string; accountId: string; email: string };
    assert.match(added.id, /^usr_/);
    assert.deepEqual([added.accountId, added.email], [account.id, 'studio@example.test']);

    const suspended = await atelier(
      ['account', 'update', '--account', account.id, '--status', 'suspended'],
      env,
    );
    assert.equal((JSON.parse(suspended.stdout) as { status: string }).status, 'suspended');

    const server = await startServer(env);
    try {
      assert.doesNotMatch(server.stderr(), /First run/, 'no admin when accounts exist');
      const signedIn = await fetch(`${server.url}/idp/sign-in`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'studio@example.test', password: 'a long enough password' }),
      });
      assert.equal(signedIn.status, 200, 'the password came from stdin, without its newline');
      assert.deepEqual(errorCodes(await graphql(server.url, { query: me, apiKey: secret })), [
        '100101',
      ]);
    } finally {
      await server.stop();
    }
  });

  it('names every object inherits are unknown commands, and print nothing of the server', async () => {
    const env = { DATA_DIR: migratedDataDir() };
    for (const name of ['constructor', '__proto__', 'toString', 'valueOf']) {
      const run = await atelier([name], env);
      assert.equal(run.code, 2, `${name}: ${run.stdout}${run.stderr}`);
      assert.equal(run.stdout, '', name);
      assert.match(run.stderr, new RegExp(`^Unknown command "${name}"\\.`), name);
      assert.doesNotMatch(run.stderr, /dataDir|publicUrl|pglite/, name);
    }
  });

  it('account list, account show and apikey list print what there is, never a secret', async () => {
    const env = { DATA_DIR: migratedDataDir() };
    const made: { id: string; alias: string }[] = [];
    for (const alias of ['carol', 'alice', 'bob']) {
      const run = await atelier(
        ['account', 'create', '--alias', alias, '--credits', 'standard=7', '--api-key-access'],
        env,
      );
      made.push(JSON.parse(run.stdout) as { id: string; alias: string });
    }
    const first = await atelier(['account', 'list', '--first', '2'], env);
    assert.equal(first.code, 0, first.stderr);
    const page = JSON.parse(first.stdout) as {
      accounts: { alias: string; creditBalances: unknown[] }[];
      next: string | null;
    };
    assert.deepEqual(
      page.accounts.map((a) => a.alias),
      ['alice', 'bob'],
    );
    assert.deepEqual(page.accounts[0]!.creditBalances, [{ category: 'standard', amount: 7 }]);
    assert.equal(page.next, 'bob');
    const rest = JSON.parse((await atelier(['account', 'list', '--after', 'bob'], env)).stdout) as {
      accounts: { alias: string }[];
      next: string | null;
    };
    assert.deepEqual([rest.accounts.map((a) => a.alias), rest.next], [['carol'], null]);

    const carol = made[0]!;
    const byAlias = JSON.parse(
      (await atelier(['account', 'show', '--alias', 'carol'], env)).stdout,
    );
    const byId = JSON.parse(
      (await atelier(['account', 'show', '--account', carol.id], env)).stdout,
    );
    assert.deepEqual(byAlias, byId);
    assert.equal(byId.id, carol.id);
    const missing = await atelier(['account', 'show', '--alias', 'nobody'], env);
    assert.equal((JSON.parse(missing.stderr) as { error: { code: string } }).error.code, '140004');

    const key = JSON.parse(
      (await atelier(['apikey', 'create', '--account', carol.id, '--name', 'ci'], env)).stdout,
    ) as { secret: string; apiKey: { id: string } };
    const keys = await atelier(['apikey', 'list', '--account', carol.id], env);
    assert.equal(keys.code, 0, keys.stderr);
    const listed = JSON.parse(keys.stdout) as { id: string; name: string; prefix: string }[];
    assert.deepEqual(
      listed.map((k) => [k.id, k.name]),
      [[key.apiKey.id, 'ci']],
    );
    assert.ok(key.secret.startsWith(listed[0]!.prefix));
    assert.doesNotMatch(keys.stdout, new RegExp(key.secret), 'metadata only');

    const revoked = await atelier(
      ['apikey', 'revoke', '--account', carol.id, '--key', key.apiKey.id],
      env,
    );
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.notEqual((JSON.parse(revoked.stdout) as { revokedAt: string | null }).revokedAt, null);
    const elsewhere = await atelier(
      ['apikey', 'revoke', '--account', made[1]!.id, '--key', key.apiKey.id],
      env,
    );
    assert.equal(JSON.parse(elsewhere.stderr).error.code, '140004');
  });

  it('account deduct takes credits back with a reason; audit lists the operator’s acts as cli', async () => {
    const env = { DATA_DIR: migratedDataDir() };
    const dana = JSON.parse(
      (await atelier(['account', 'create', '--alias', 'dana', '--credits', 'standard=9'], env))
        .stdout,
    ) as { id: string };
    const deducted = await atelier(
      [
        'account',
        'deduct',
        '--account',
        dana.id,
        '--category',
        'standard',
        '--amount',
        '4',
        '--reason',
        'chargeback 7',
      ],
      env,
    );
    assert.equal(deducted.code, 0, deducted.stderr);
    assert.deepEqual(JSON.parse(deducted.stdout), { category: 'standard', amount: 5 });
    const tooMuch = await atelier(
      [
        'account',
        'deduct',
        '--account',
        dana.id,
        '--category',
        'standard',
        '--amount',
        '6',
        '--reason',
        'x',
      ],
      env,
    );
    assert.equal(tooMuch.code, 1);
    assert.equal(JSON.parse(tooMuch.stderr).error.code, '120001');
    const noReason = await atelier(
      ['account', 'deduct', '--account', dana.id, '--category', 'standard', '--amount', '1'],
      env,
    );
    assert.equal(noReason.code, 2, 'a usage error');
    assert.match(noReason.stderr, /--reason is required/);

    const audit = await atelier(['audit', '--account', dana.id], env);
    assert.equal(audit.code, 0, audit.stderr);
    const log = JSON.parse(audit.stdout) as {
      nodes: Array<{
        action: string;
        detail: Record<string, unknown>;
        actor: { credential: string };
      }>;
    };
    assert.deepEqual(
      log.nodes.map((e) => [e.action, e.actor.credential]),
      [
        ['credits.deducted', 'cli'],
        ['account.created', 'cli'],
      ],
    );
    assert.deepEqual(log.nodes[0]!.detail, { amount: 4, balance: 5, reason: 'chargeback 7' });
    const badSince = await atelier(['audit', '--since', 'yesterday'], env);
    assert.equal(badSince.code, 1);
    assert.deepEqual(JSON.parse(badSince.stderr).error.problems, [
      { field: 'since', message: 'must be a time such as 2031-01-01T00:00:00Z' },
    ]);
  });

  it('bad input is refused with a clear message and changes nothing', async () => {
    const env = { DATA_DIR: migratedDataDir() };
    const bad = await atelier(
      ['account', 'create', '--alias', 'no spaces', '--credits', 'standard=0'],
      env,
    );
    assert.equal(bad.code, 1);
    const error = JSON.parse(bad.stderr) as {
      error: { code: string; problems: Array<{ field: string }> };
    };
    assert.equal(error.error.code, '120001');
    assert.deepEqual(
      error.error.problems.map((p) => p.field),
      ['alias', 'amount'],
    );

    const usage = await atelier(['account', 'grant', '--account', 'acc_x'], env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--category is required/);

    const unknown = await atelier(
      ['account', 'grant', '--account', 'acc_missing', '--category', 'standard', '--amount', '1'],
      env,
    );
    assert.equal(unknown.code, 1);
    assert.equal((JSON.parse(unknown.stderr) as { error: { code: string } }).error.code, '140004');

    const noAccess = await atelier(['account', 'create', '--alias', 'plain'], env);
    const plain = JSON.parse(noAccess.stdout) as { id: string };

    // Issue 30 §6: a negative or non-numeric amount is the documented JSON error, not the
    // usage text; a category nothing spends is refused, naming the ones there are.
    for (const [amount, message] of [
      ['-5', /must be a whole number from 1 to/],
      ['0', /must be a whole number from 1 to/],
      ['five', /must be a whole number/],
    ] as const) {
      const run = await atelier(
        ['account', 'grant', '--account', plain.id, '--category', 'standard', '--amount', amount],
        env,
      );
      assert.equal(run.code, 1, `${amount}: ${run.stderr}`);
      const { error } = JSON.parse(run.stderr) as {
        error: { code: string; field: string; message: string };
      };
      assert.deepEqual([error.code, error.field], ['120001', 'amount'], amount);
      assert.match(error.message, message, amount);
    }
    const typo = await atelier(
      ['account', 'grant', '--account', plain.id, '--category', 'standrad', '--amount', '5'],
      env,
    );
    const { error: typoError } = JSON.parse(typo.stderr) as {
      error: { code: string; field: string; message: string };
    };
    assert.deepEqual([typoError.code, typoError.field], ['120001', 'category']);
    assert.match(typoError.message, /no category "standrad": the categories are standard/);
    const shown = await atelier(['account', 'show', '--account', plain.id], env);
    assert.deepEqual(
      (JSON.parse(shown.stdout) as { creditBalances: unknown[] }).creditBalances,
      [],
    );
    const refused = await atelier(['apikey', 'create', '--account', plain.id], env);
    assert.equal((JSON.parse(refused.stderr) as { error: { code: string } }).error.code, '110202');

    const badConfig = await atelier(['migrate'], { ...env, PORT: 'x', LOG_LEVEL: 'chatty' });
    assert.equal(badConfig.code, 1);
    assert.match(
      badConfig.stderr,
      /Invalid configuration:\n {2}- PORT: .*\n {2}- LOG_LEVEL: .*\n$/,
    );
  });
  it('text no edge accepts (NUL) is a JSON 120001 naming the field', async () => {
    const env = { DATA_DIR: migratedDataDir() };
    const created = await atelier(['account', 'create', '--alias', 'texty'], env);
    const { id } = JSON.parse(created.stdout) as { id: string };
    // Arguments carry neither (the OS passes C strings; bytes that are not UTF-8 arrive as
    // U+FFFD, so no process input can hold a lone surrogate): NUL on standard input can.
    for (const password of ['a long pass\u0000word', '\u0000a long password']) {
      const added = await atelier(
        [
          'idp',
          'user',
          'add',
          '--account',
          id,
          '--email',
          'texty@example.test',
          '--password-stdin',
        ],
        env,
        password,
      );
      assert.equal(added.code, 1, added.stderr);
      const { error } = JSON.parse(added.stderr) as { error: { code: string; field: string } };
      assert.deepEqual([error.code, error.field], ['120001', 'password']);
    }
    const ok = await atelier(
      ['idp', 'user', 'add', '--account', id, '--email', 'texty@example.test', '--password-stdin'],
      env,
      'a long password',
    );
    assert.equal(ok.code, 0, 'nothing was created by the refused ones');
  });

  it('credits are capped at 1,000,000,000 per balance: a grant past it is a JSON 120001 on amount and changes nothing', async () => {
    await assertCreditCap({ DATA_DIR: migratedDataDir() });
  });

  it('usage prints the report as JSON; a bad range, dimension or kind is a JSON 120001 naming it', async () => {
    const env = { DATA_DIR: migratedDataDir() };
    const created = await atelier(['account', 'create', '--alias', 'quiet'], env);
    const { id } = JSON.parse(created.stdout) as { id: string };
    const report = await atelier(
      ['usage', '--from', '2026-01-01', '--to', '2026-02-01', '--group-by', 'day,model'],
      env,
    );
    assert.equal(report.code, 0, report.stderr);
    assert.deepEqual(JSON.parse(report.stdout), { rows: [] });
    const one = await atelier(
      ['usage', '--from', '2026-01-01', '--to', '2026-01-02', '--account', id, '--kind', 'image'],
      env,
    );
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(JSON.parse(one.stdout), { rows: [] });

    const refusedOn = async (args: string[]) => {
      const result = await atelier(['usage', ...args], env);
      assert.equal(result.code, 1, result.stderr);
      assert.equal(result.stdout, '');
      const { error } = JSON.parse(result.stderr) as { error: { code: string; field: string } };
      return `${error.code} ${error.field}`;
    };
    assert.equal(await refusedOn(['--from', '2026-02-01', '--to', '2026-01-01']), '120001 to');
    assert.equal(await refusedOn(['--from', '2024-01-01', '--to', '2026-01-01']), '120001 to');
    assert.equal(await refusedOn(['--to', '2026-01-01']), '120001 from');
    assert.equal(await refusedOn(['--from', 'last week', '--to', '2026-01-01']), '120001 from');
    assert.equal(
      await refusedOn(['--from', '2026-01-01', '--to', '2026-01-02', '--group-by', 'day,planet']),
      '120001 groupBy',
    );
    assert.equal(
      await refusedOn(['--from', '2026-01-01', '--to', '2026-01-02', '--kind', 'music']),
      '120001 kind',
    );
  });
});

describe('bin/atelier on PostgreSQL', {
  skip: postgresUrl === undefined ? 'TEST_DATABASE_URL is not set' : false,
}, () => {
  it('migrate, account create and serve work against DATABASE_URL; nothing is created implicitly', async () => {
    const database = await createEmptyPostgresDatabase();
    after(() => database.drop());
    const env = { DATABASE_URL: database.url, DATA_DIR: tempDataDir() };
    const migrated = await atelier(['migrate'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.deepEqual(JSON.parse(migrated.stdout), { applied: allMigrations });
    assert.deepEqual(JSON.parse((await atelier(['migrate'], env)).stdout), { applied: [] });

    const server = await startServer(env);
    try {
      assert.doesNotMatch(server.stderr(), /First run/);
      // With PostgreSQL, operator commands run while the server serves.
      const created = await atelier(
        ['account', 'create', '--alias', 'ops', '--api-key-access', '--credits', 'standard=3'],
        env,
      );
      assert.equal(created.code, 0, created.stderr);
      const { id } = JSON.parse(created.stdout) as { id: string };
      const key = JSON.parse(
        (await atelier(['apikey', 'create', '--account', id], env)).stdout,
      ) as { secret: string };
      const res = await graphql<{ getUserByPrivateId: { id: string } }>(server.url, {
        query: me,
        apiKey: key.secret,
      });
      assert.equal(res.body.data?.getUserByPrivateId.id, id);
    } finally {
      await server.stop();
    }
  });

  it('the credit cap holds on PostgreSQL too', async () => {
    const database = await createEmptyPostgresDatabase();
    after(() => database.drop());
    const env = { DATABASE_URL: database.url, DATA_DIR: tempDataDir() };
    assert.equal((await atelier(['migrate'], env)).code, 0);
    await assertCreditCap(env);
  });
});

/** A grant past the credit cap, or of an amount past it, is a JSON 120001 and changes nothing. */
async function assertCreditCap(env: Record<string, string>) {
  const refusedOn = (result: { code: number; stdout: string; stderr: string }) => {
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, '');
    const { error } = JSON.parse(result.stderr) as { error: { code: string; field: string } };
    return `${error.code} ${error.field}`;
  };
  const tooBig = await atelier(
    ['account', 'create', '--alias', 'rich', '--credits', 'standard=99999999999'],
    env,
  );
  assert.equal(refusedOn(tooBig), '120001 amount');
  const created = await atelier(
    ['account', 'create', '--alias', 'rich', '--credits', 'standard=999999990'],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const { id } = JSON.parse(created.stdout) as { id: string };
  const grant = (amount: string) =>
    atelier(
      ['account', 'grant', '--account', id, '--category', 'standard', '--amount', amount],
      env,
    );
  assert.equal(refusedOn(await grant('99999999999')), '120001 amount');
  assert.equal(refusedOn(await grant('11')), '120001 amount');
  const exact = await grant('10');
  assert.deepEqual(JSON.parse(exact.stdout), { category: 'standard', amount: 1_000_000_000 });
}
