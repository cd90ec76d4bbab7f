import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { controlSocketPath } from '../../../src/cli/control-socket.ts';
import { atelier, type RunningServer, startServer } from '../../helpers/cli.ts';
import { graphql } from '../../helpers/graphql.ts';

// Issue 20: operator commands while the server runs on the embedded database. The server
// holds PGlite, so the command line asks it, over a Unix socket only the data directory's
// owner can use, to run the command; the answer and exit code are those of a direct run.

/** One raw request on the control socket, and what came back before the server closed it. */
function rawRequest(dataDir: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(controlSocketPath(dataDir));
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk.toString();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.on('connect', () => socket.end(body));
  });
}

describe('operator commands while serve runs on the embedded database', () => {
  let dataDir: string;
  let server: RunningServer;
  let env: Record<string, string>;
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-control-'));
    env = { DATA_DIR: dataDir };
    server = await startServer(env);
  });
  after(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('listens on a socket only the owner can reach', () => {
    const socket = controlSocketPath(dataDir);
    assert.equal(statSync(socket).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(socket)).mode & 0o777, 0o700);
  });

  it('account create, a key and a sign-in run in the server, visible through its API at once', async () => {
    const created = await atelier(
      [
        'account',
        'create',
        '--alias',
        'walkthrough',
        '--credits',
        'standard=7',
        '--api-key-access',
      ],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const account = JSON.parse(created.stdout) as { id: string; alias: string };
    assert.equal(account.alias, 'walkthrough');

    const key = await atelier(['apikey', 'create', '--account', account.id], env);
    assert.equal(key.code, 0, key.stderr);
    const { secret } = JSON.parse(key.stdout) as { secret: string };
    const me = await graphql<{
      getUserByPrivateId: { id: string; creditBalances: { amount: number }[] };
    }>(server.url, {
      query: '{ getUserByPrivateId { id creditBalances { amount } } }',
      apiKey: secret,
    });
    assert.equal(me.body.data?.getUserByPrivateId.id, account.id);
    assert.equal(me.body.data?.getUserByPrivateId.creditBalances[0]?.amount, 7);

    // The password travels from this command's standard input, never from its arguments.
    const user = await atelier(
      [
        'idp',
        'user',
        'add',
        '--account',
        account.id,
        '--email',
        'w@example.test',
        '--password-stdin',
      ],
      env,
      'a walkthrough password\n',
    );
    assert.equal(user.code, 0, user.stderr);
    const signIn = await fetch(`${server.url}/idp/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'w@example.test', password: 'a walkthrough password' }),
    });
    assert.equal(signIn.status, 200);
  });

  it('refuses bad commands as a direct run does, changing nothing', async () => {
    const unknown = await atelier(
      ['account', 'grant', '--account', 'acc_nobody', '--category', 'standard', '--amount', '5'],
      env,
    );
    assert.equal(unknown.code, 1);
    assert.deepEqual(JSON.parse(unknown.stderr), {
      error: { code: '140004', message: 'No such account.' },
    });
    const missing = await atelier(['account', 'grant', '--account', 'acc_nobody'], env);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^--category is required\./);
    const noPassword = await atelier(
      ['idp', 'user', 'add', '--account', 'acc_x', '--email', 'x@example.test'],
      env,
    );
    assert.equal(noPassword.code, 2);
    assert.match(noPassword.stderr, /--password-stdin is required/);
  });

  it('answers a malformed or oversized request with a refusal, and keeps serving', async () => {
    const malformed = JSON.parse(await rawRequest(dataDir, 'not json\n')) as {
      ok: boolean;
      error: { kind: string };
    };
    assert.deepEqual([malformed.ok, malformed.error.kind], [false, 'usage']);
    const unknown = JSON.parse(
      await rawRequest(dataDir, `${JSON.stringify({ command: 'serve', values: {} })}\n`),
    ) as { ok: boolean; error: { message: string } };
    assert.equal(unknown.ok, false);
    assert.match(unknown.error.message, /Unknown command "serve"/);
    // Names every object inherits are not commands (issue 30 §3: `constructor` printed the core).
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const answer = await rawRequest(
        dataDir,
        `${JSON.stringify({ command: name, values: {} })}\n`,
      );
      const parsed = JSON.parse(answer) as { ok: boolean; error: { message: string } };
      assert.equal(parsed.ok, false, answer);
      assert.match(parsed.error.message, new RegExp(`Unknown command "${name}"`), answer);
      assert.doesNotMatch(answer, /postgres:|databaseUrl|dataDir/);
    }
    const huge = JSON.parse(await rawRequest(dataDir, 'x'.repeat(100_000))) as { ok: boolean };
    assert.equal(huge.ok, false);
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
  });
});

describe('the control socket across server lifetimes', () => {
  it('is gone after a stop; commands then run directly; a killed server’s socket is replaced', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'atelier-control-'));
    const env = { DATA_DIR: dataDir };
    try {
      const first = await startServer(env);
      assert.equal(await first.stop(), 0);
      assert.equal(existsSync(controlSocketPath(dataDir)), false, 'removed at a clean stop');
      const direct = await atelier(['account', 'create', '--alias', 'direct'], env);
      assert.equal(direct.code, 0, direct.stderr);

      const killed = await startServer(env);
      await killed.kill();
      assert.equal(existsSync(controlSocketPath(dataDir)), true, 'left behind by SIGKILL');
      const next = await startServer(env);
      try {
        const viaNext = await atelier(['account', 'create', '--alias', 'after-kill'], env);
        assert.equal(viaNext.code, 0, viaNext.stderr);
      } finally {
        await next.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
