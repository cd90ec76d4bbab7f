import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { cliTable, renderCliTable } from '../../src/cli/cli-table.ts';
import { commandNames, commands, usageText } from '../../src/cli/commands.ts';
import { main } from '../../src/cli/main.ts';
import { describeDrift } from '../../src/shared/generated-section.ts';

// Issue 33: the command-line reference is generated from the declaration (src/cli/commands.ts).
// docs/cli.md's table is its rendering (`npm run docs:cli`), and `atelier --help` lists every
// command the code runs.

const page = readFileSync(new URL(`../../${cliTable.page}`, import.meta.url), 'utf8');

describe('the command-line reference (docs/cli.md, --help)', () => {
  it("docs/cli.md's table is the rendering of the declaration", () => {
    const drift = describeDrift(cliTable, page, renderCliTable(commands));
    assert.equal(drift, null, drift ?? '');
  });

  it('a drifted table fails naming the row and the command that regenerates it', () => {
    const edited = page.replace(/^\| `audit .*$/m, '');
    const drift = describeDrift(cliTable, edited, renderCliTable(commands)) ?? '';
    assert.match(drift, /^\+ \| `audit \[--account ID\]/m);
    assert.match(drift, /npm run docs:cli/);
  });

  it('--help lists every command with its summary', async () => {
    const lines = usageText().split('\n');
    for (const command of commands) {
      const at = lines.findIndex((line) => line.startsWith(`  ${command.name}`));
      assert.ok(at >= 0, `--help lists ${command.name}`);
      assert.ok(
        `${lines[at]}\n${lines[at + 1]}`.includes(command.summary),
        `--help gives the summary of ${command.name}`,
      );
    }
    assert.equal(new Set(commandNames()).size, commands.length, 'no name twice');
    // What the process prints is that text.
    const printed: string[] = [];
    const log = console.log;
    console.log = (line: string) => printed.push(line);
    try {
      assert.equal(await main(['--help']), 0);
    } finally {
      console.log = log;
    }
    assert.deepEqual(printed, [usageText()]);
  });
});
