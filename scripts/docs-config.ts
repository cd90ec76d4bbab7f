// `npm run docs:config`: rewrites the configuration table of docs/configuration.md from the
// declaration in src/config/variables.ts (test/conformance/config-docs.test.ts fails until it is run).
import { readFileSync, writeFileSync } from 'node:fs';
import { configPage, renderConfigTable, writeConfigTable } from '../src/config/config-table.ts';
import { variables } from '../src/config/variables.ts';

const page = new URL(`../${configPage}`, import.meta.url);
const before = readFileSync(page, 'utf8');
const after = writeConfigTable(before, renderConfigTable(variables));
if (after !== before) writeFileSync(page, after);
process.stdout.write(
  `${configPage}: configuration table ${after === before ? 'already up to date' : 'rewritten'}\n`,
);
