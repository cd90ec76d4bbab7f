import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { atelier } from '../../helpers/cli.ts';

// What an operator sees when the configuration is wrong: every problem at once, each naming
// its variable, in the order of the configuration table (docs/configuration.md), and nothing
// started.

const page = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
/** The variables of the configuration table, top to bottom. */
const documented = [...page.matchAll(/^\| `(\w+)` \| /gm)].map((m) => m[1]!);

describe('bin/atelier serve with an invalid configuration', () => {
  it('lists every invalid variable once, in the configuration table’s order, and starts nothing', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'atelier-config-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const dataDir = path.join(dir, 'data');
    const env: Record<string, string> = {};
    for (const name of documented) env[name] = 'not valid!';
    // Free text is valid for these; give them real values so only the invalid ones speak.
    Object.assign(env, {
      CONFIG_FILE: '',
      DATA_DIR: dataDir,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      METRICS_HOST: '127.0.0.1',
    });

    const result = await atelier(['serve'], env);

    assert.equal(result.code, 1, result.stderr);
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines[0], 'Invalid configuration:');
    const named = lines.slice(1).map((line) => /^ {2}- (\w+)[.:]/.exec(line)?.[1]);
    for (const name of named) assert.ok(name && documented.includes(name), String(name));
    assert.equal(new Set(named).size, named.length, 'each variable once');
    const order = named.map((name) => documented.indexOf(name!));
    assert.deepEqual(
      order,
      [...order].sort((a, b) => a - b),
      'in the table order',
    );
    // Numbers, choices, URLs and lists: each refused with what it expected and what it got.
    for (const name of ['PORT', 'LOG_LEVEL', 'PUBLIC_URL', 'TASK_LEASE_MS', 'TRUST_PROXY']) {
      assert.match(result.stderr, new RegExp(`^ {2}- ${name}: .+ \\(got "not valid!"\\)$`, 'm'));
    }
    assert.match(result.stderr, /^ {2}- PORT: expected a whole number from 1 to 65535 /m);
    assert.equal(existsSync(dataDir), false, 'no data directory was created');
  });
});

// What an operator sees when the settings are valid but the world is not as they say: one line
// naming what failed and what to do, never a stack (docs/troubleshooting.md).
describe('bin/atelier serve where the port or the database is not there', () => {
  const noStack = (stderr: string) => assert.doesNotMatch(stderr, /^\s+at /m, stderr);

  it('a port another process holds: says which, and how to choose another', async (test) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'atelier-port-'));
    test.after(() => rmSync(dir, { recursive: true, force: true }));
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    test.after(() => holder.close());
    const { port } = holder.address() as AddressInfo;

    const result = await atelier(['serve'], {
      DATA_DIR: path.join(dir, 'data'),
      HOST: '127.0.0.1',
      PORT: String(port),
    });

    assert.equal(result.code, 1, result.stderr);
    assert.equal(
      result.stderr.trim().split('\n').at(-1),
      `127.0.0.1:${port} is in use by another process (an Atelier still running?): stop it, or set PORT to a free port.`,
    );
    noStack(result.stderr);
  });

  it('PostgreSQL that does not answer: names it without its credentials', async () => {
    const closed = await freePort();
    const result = await atelier(['migrate'], {
      DATABASE_URL: `postgres://someone:hunter22@127.0.0.1:${closed}/atelier`,
      DATABASE_TIMEOUT_MS: '2000',
    });

    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(
        `^Cannot open PostgreSQL at 127\\.0\\.0\\.1:${closed}/atelier \\(DATABASE_URL\\): .*ECONNREFUSED`,
        'm',
      ),
    );
    assert.doesNotMatch(result.stderr, /hunter22/);
    noStack(result.stderr);
  });
});

/** A port nothing listens on: one the system gave out and took back. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
