// `npm run docs:config` / `npm run docs:cli`: rewrites a generated table of docs/ from the code
// that declares it (test/conformance/config-docs.test.ts and cli-docs.test.ts fail until it is
// run).
import { readFileSync, writeFileSync } from 'node:fs';
import { cliTable, renderCliTable } from '../src/cli/cli-table.ts';
import { commands } from '../src/cli/commands.ts';
import { configTable, renderConfigTable } from '../src/config/config-table.ts';
import { variables } from '../src/config/variables.ts';
import { type GeneratedSection, writeSection } from '../src/shared/generated-section.ts';

const tables: Record<string, [GeneratedSection, () => string]> = {
  config: [configTable, () => renderConfigTable(variables)],
  cli: [cliTable, () => renderCliTable(commands)],
};

const which = process.argv[2] ?? '';
const table = Object.hasOwn(tables, which) ? tables[which] : undefined;
if (table === undefined) {
  process.stderr.write(`Usage: node scripts/docs-tables.ts ${Object.keys(tables).join('|')}\n`);
  process.exit(2);
}
const [section, render] = table;
const page = new URL(`../${section.page}`, import.meta.url);
const before = readFileSync(page, 'utf8');
const after = writeSection(section, before, render());
if (after !== before) writeFileSync(page, after);
process.stdout.write(
  `${section.page}: ${section.what} ${after === before ? 'already up to date' : 'rewritten'}\n`,
);
