import type { Variables } from './variable.ts';

/** The page that holds the table, relative to the repository. */
export const configPage = 'docs/configuration.md';

/**
 * Where the generated table sits in docs/configuration.md; everything between the two lines is
 * rewritten.
 */
export const tableStart =
  '<!-- config table: generated from src/config/variables.ts by `npm run docs:config` -->';
export const tableEnd = '<!-- end of config table -->';

/** The configuration table, one row per variable, in declaration order. */
export function renderConfigTable(variables: Variables): string {
  const rows = Object.entries(variables).map(([name, variable]) => {
    const shown =
      variable.shownDefault ?? (variable.default === undefined ? '—' : `\`${variable.default}\``);
    return `| \`${name}\` | ${cell(shown)} | ${cell(variable.description)} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The table between the markers of a page, or null when the markers are missing. */
export function readConfigTable(page: string): string | null {
  const start = page.indexOf(`${tableStart}\n`);
  const end = page.indexOf(`\n${tableEnd}`);
  if (start === -1 || end < start) return null;
  return page.slice(start + tableStart.length + 1, end);
}

/** The page with its table replaced by `table`; throws when the markers are missing. */
export function writeConfigTable(page: string, table: string): string {
  const current = readConfigTable(page);
  if (current === null)
    throw new Error(`${configPage} lacks the lines ${tableStart} and ${tableEnd}`);
  const start = page.indexOf(`${tableStart}\n`) + tableStart.length + 1;
  return `${page.slice(0, start)}${table}${page.slice(start + current.length)}`;
}

/** A pipe would end the cell early. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/**
 * Null when the page's table is the rendering; otherwise what differs, line by line
 * (`-` only on the page, `+` only in the rendering), and the command that fixes it.
 */
export function describeTableDrift(page: string, rendered: string): string | null {
  const current = readConfigTable(page);
  if (current === rendered) return null;
  const fix = 'Run `npm run docs:config` to regenerate it from src/config/variables.ts.';
  if (current === null)
    return `${configPage} has no configuration table between ${tableStart} and ${tableEnd}. ${fix}`;
  const onPage = new Set(current.split('\n'));
  const inRendering = new Set(rendered.split('\n'));
  const lines = [
    ...[...onPage].filter((line) => !inRendering.has(line)).map((line) => `- ${line}`),
    ...[...inRendering].filter((line) => !onPage.has(line)).map((line) => `+ ${line}`),
  ];
  if (lines.length === 0) lines.push('(the same rows, in another order)');
  return `${configPage}'s configuration table differs from the declaration:\n${lines.join('\n')}\n${fix}`;
}
