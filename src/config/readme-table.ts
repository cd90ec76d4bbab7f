import type { Variables } from './variable.ts';

/** Where the generated table sits in README.md; everything between the two lines is rewritten. */
export const tableStart =
  '<!-- config table: generated from src/config/variables.ts by `npm run docs:config` -->';
export const tableEnd = '<!-- end of config table -->';

/** The README's configuration table, one row per variable, in declaration order. */
export function renderConfigTable(variables: Variables): string {
  const rows = Object.entries(variables).map(([name, variable]) => {
    const shown =
      variable.shownDefault ?? (variable.default === undefined ? '—' : `\`${variable.default}\``);
    return `| \`${name}\` | ${cell(shown)} | ${cell(variable.description)} |`;
  });
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The table between the markers of a README, or null when the markers are missing. */
export function readConfigTable(readme: string): string | null {
  const start = readme.indexOf(`${tableStart}\n`);
  const end = readme.indexOf(`\n${tableEnd}`);
  if (start === -1 || end < start) return null;
  return readme.slice(start + tableStart.length + 1, end);
}

/** The README with its table replaced by `table`; throws when the markers are missing. */
export function writeConfigTable(readme: string, table: string): string {
  const current = readConfigTable(readme);
  if (current === null) throw new Error(`README.md lacks the lines ${tableStart} and ${tableEnd}`);
  const start = readme.indexOf(`${tableStart}\n`) + tableStart.length + 1;
  return `${readme.slice(0, start)}${table}${readme.slice(start + current.length)}`;
}

/** A pipe would end the cell early. */
function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/**
 * Null when the README's table is the rendering; otherwise what differs, line by line
 * (`-` only in the README, `+` only in the rendering), and the command that fixes it.
 */
export function describeTableDrift(readme: string, rendered: string): string | null {
  const current = readConfigTable(readme);
  if (current === rendered) return null;
  const fix = 'Run `npm run docs:config` to regenerate it from src/config/variables.ts.';
  if (current === null)
    return `README.md has no configuration table between ${tableStart} and ${tableEnd}. ${fix}`;
  const inReadme = new Set(current.split('\n'));
  const inRendering = new Set(rendered.split('\n'));
  const lines = [
    ...[...inReadme].filter((line) => !inRendering.has(line)).map((line) => `- ${line}`),
    ...[...inRendering].filter((line) => !inReadme.has(line)).map((line) => `+ ${line}`),
  ];
  if (lines.length === 0) lines.push('(the same rows, in another order)');
  return `README.md's configuration table differs from the declaration:\n${lines.join('\n')}\n${fix}`;
}
