import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { commandNames, usageText } from '../../src/cli/main.ts';

// Issue 33: the command-line reference is current. docs/cli.md's table and `atelier --help`
// name every command the code runs, and nothing else.

const page = readFileSync(new URL('../../docs/cli.md', import.meta.url), 'utf8');

/** The commands a reference table names: the words of each row's first cell before options. */
function documented(text: string): string[] {
  return [...text.matchAll(/^\| `([a-z][a-z -]*?)(?: [[-]|`)/gm)].map((m) => m[1]!.trim());
}

describe('the command-line reference (docs/cli.md, --help) names every command', () => {
  it('docs/cli.md has a row for every command, and none for a command that is not one', () => {
    assert.deepEqual([...new Set(documented(page))].sort(), commandNames().sort());
  });

  it('--help lists every command', () => {
    const listed = usageText()
      .split('\n')
      .map((line) => /^ {2}([a-z][a-z -]*?)(?: {2,}| --|$| \[)/.exec(line)?.[1]?.trim())
      .filter((name): name is string => name !== undefined);
    assert.deepEqual([...new Set(listed)].sort(), commandNames().sort());
  });

  it('notices a command left out (the check itself works)', () => {
    const without = page.replace(/^\| `audit .*$/m, '');
    assert.notDeepEqual([...new Set(documented(without))].sort(), commandNames().sort());
  });
});
