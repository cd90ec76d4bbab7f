import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { buildSchema, findBreakingChanges } from 'graphql';
import { buildGraphqlSchema } from '../../src/edge/graphql/schema.ts';

const contractPath = new URL('../../docs/contract.graphql', import.meta.url);
const sharedContractPath = new URL('../../../shared/api/contract.graphql', import.meta.url);

describe('the served schema is a compatible superset of the contract', () => {
  it('breaks nothing: every contract type, field, argument and enum value is served alike', () => {
    const contract = buildSchema(readFileSync(contractPath, 'utf8'));
    const changes = findBreakingChanges(contract, buildGraphqlSchema());
    assert.deepEqual(
      changes.map((c) => c.description),
      [],
    );
  });

  it('docs/contract.graphql is the shared contract, unchanged', {
    skip: !existsSync(sharedContractPath),
  }, () => {
    assert.equal(readFileSync(contractPath, 'utf8'), readFileSync(sharedContractPath, 'utf8'));
  });
});
