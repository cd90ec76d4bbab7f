import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { referencePage, renderGraphqlReference } from '../../scripts/graphql-reference.ts';
import { buildGraphqlSchema } from '../../src/edge/graphql/schema.ts';

// Issue 33: the GraphQL reference is generated from the served schema and its descriptions
// (`npm run docs:graphql`), so it is never out of date with what the server answers.

describe('the GraphQL reference (docs/graphql-reference.md)', () => {
  const schema = buildGraphqlSchema();
  const rendered = renderGraphqlReference(schema);

  it('is the rendering of the served schema', () => {
    const page = readFileSync(new URL(`../../${referencePage}`, import.meta.url), 'utf8');
    assert.ok(page === rendered, `${referencePage} is out of date: run npm run docs:graphql`);
  });

  it('names every root field and every type the schema has', () => {
    for (const root of [schema.getQueryType(), schema.getMutationType()]) {
      for (const name of Object.keys(root!.getFields())) {
        assert.ok(rendered.includes(`### \`${name}\`\n`), name);
      }
    }
    for (const name of Object.keys(schema.getTypeMap()).filter((n) => !n.startsWith('__'))) {
      assert.match(rendered, new RegExp(`^(## ${name}|### \`${name}\`)`, 'm'), name);
    }
  });
});
