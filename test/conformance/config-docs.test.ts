import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { configVariables, loadConfig } from '../../src/config/config.ts';
import { configTable, renderConfigTable } from '../../src/config/config-table.ts';
import { variables } from '../../src/config/variables.ts';
import { describeDrift, readSection } from '../../src/shared/generated-section.ts';

// The configuration is declared once (src/config/variables.ts); the table of
// docs/configuration.md is made from it by `npm run docs:config`, and these tests fail when the
// two drift apart.

const page = readFileSync(new URL(`../../${configTable.page}`, import.meta.url), 'utf8');

describe('configuration documentation', () => {
  it("docs/configuration.md's table is the rendering of the declaration", () => {
    const drift = describeDrift(configTable, page, renderConfigTable(variables));
    assert.equal(drift, null, drift ?? '');
  });

  it('a drifted table fails with the differing rows and the command that regenerates it', () => {
    const rendered = renderConfigTable(variables);
    const portRow = '| `PORT` | `8080` | HTTP port |';
    assert.ok(rendered.includes(portRow));
    const edited = page.replace(portRow, '| `PORT` | `80` | HTTP port |');
    const drift = describeDrift(configTable, edited, rendered) ?? '';
    assert.match(drift, /^- \| `PORT` \| `80` \| HTTP port \|$/m);
    assert.match(drift, /^\+ \| `PORT` \| `8080` \| HTTP port \|$/m);
    assert.match(drift, /npm run docs:config/);
    const unmarked = describeDrift(configTable, '# no table here\n', rendered) ?? '';
    assert.match(unmarked, /no configuration table.*npm run docs:config/s);
  });

  it('every variable the loader reads has a row, in declaration order, with a meaning', () => {
    const read = new Set<string>();
    const env = new Proxy({} as Record<string, string | undefined>, {
      get: (_target, key) => {
        if (typeof key === 'string') read.add(key);
        return undefined;
      },
    });
    loadConfig({ env, cwd: '/tmp' });
    assert.deepEqual([...read].sort(), [...configVariables].sort());
    const rows = (readSection(configTable, page) ?? '').split('\n').slice(2);
    const documented = rows.map((row) => /^\| `(\w+)` \|/.exec(row)?.[1]);
    assert.deepEqual(documented, [...configVariables]);
    for (const [name, variable] of Object.entries(variables))
      assert.ok(variable.description.length > 0, `${name} has a description`);
  });
});
