import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
