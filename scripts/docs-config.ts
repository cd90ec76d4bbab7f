// `npm run docs:config`: rewrites README.md's configuration table from the declaration in
// src/config/variables.ts (test/conformance/config-docs.test.ts fails until it is run).
import { readFileSync, writeFileSync } from 'node:fs';
import { renderConfigTable, writeConfigTable } from '../src/config/readme-table.ts';
import { variables } from '../src/config/variables.ts';

const readme = new URL('../README.md', import.meta.url);
const before = readFileSync(readme, 'utf8');
const after = writeConfigTable(before, renderConfigTable(variables));
if (after !== before) writeFileSync(readme, after);
process.stdout.write(
  `README.md: configuration table ${after === before ? 'already up to date' : 'rewritten'}\n`,
);
