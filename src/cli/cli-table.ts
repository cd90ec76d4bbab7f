import { type GeneratedSection, tableCell } from '../shared/generated-section.ts';
import type { CommandSpec } from './commands.ts';

/** The table of docs/cli.md, written by `npm run docs:cli`. */
export const cliTable: GeneratedSection = {
  page: 'docs/cli.md',
  what: 'command table',
  start: '<!-- command table: generated from src/cli/commands.ts by `npm run docs:cli` -->',
  end: '<!-- end of command table -->',
  fix: 'Run `npm run docs:cli` to regenerate it from src/cli/commands.ts.',
};

/** One row per command, in the order `--help` lists them. */
export function renderCliTable(commands: readonly CommandSpec[]): string {
  const rows = commands.map((c) => {
    const line = [c.name, c.synopsis].filter(Boolean).join(' ');
    return `| \`${tableCell(line)}\` | ${tableCell(c.description)} |`;
  });
  return ['| command | what it does |', '|---|---|', ...rows].join('\n');
}
