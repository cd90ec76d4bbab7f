// `npm run docs:graphql`: rewrites docs/graphql-reference.md from the served schema
// (test/conformance/graphql-reference.test.ts fails until it is run).
import { readFileSync, writeFileSync } from 'node:fs';
import { buildGraphqlSchema } from '../src/edge/graphql/schema.ts';
import { referencePage, renderGraphqlReference } from './graphql-reference.ts';

const page = new URL(`../${referencePage}`, import.meta.url);
let before = '';
try {
  before = readFileSync(page, 'utf8');
} catch {
  // not written yet
}
const after = renderGraphqlReference(buildGraphqlSchema());
if (after !== before) writeFileSync(page, after);
process.stdout.write(
  `${referencePage}: ${after === before ? 'already up to date' : 'rewritten'}\n`,
);
