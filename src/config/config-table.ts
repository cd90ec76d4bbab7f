import { type GeneratedSection, tableCell } from '../shared/generated-section.ts';
import type { Variables } from './variable.ts';

/** The table of docs/configuration.md, written by `npm run docs:config`. */
export const configTable: GeneratedSection = {
  page: 'docs/configuration.md',
  what: 'configuration table',
  start: '<!-- config table: generated from src/config/variables.ts by `npm run docs:config` -->',
  end: '<!-- end of config table -->',
  fix: 'Run `npm run docs:config` to regenerate it from src/config/variables.ts.',
};

/** The configuration table, one row per variable, in declaration order. */
export function renderConfigTable(variables: Variables): string {
  const rows = Object.entries(variables).map(([name, variable]) => {
    const shown =
      variable.shownDefault ?? (variable.default === undefined ? '—' : `\`${variable.default}\``);
    return `| \`${name}\` | ${tableCell(shown)} | ${tableCell(variable.description)} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}
