import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  limitProblems,
  periodEnd,
  periodStart,
  spenderOf,
  spendingCharges,
} from '../../src/domain/spending-limits.ts';

describe('spending limits (issue 21)', () => {
  it('periods are UTC days and calendar months, a December ending in January', () => {
    const at = new Date('2026-12-31T23:59:59.999Z');
    assert.equal(periodStart('day', at).toISOString(), '2026-12-31T00:00:00.000Z');
    assert.equal(periodEnd('day', at).toISOString(), '2027-01-01T00:00:00.000Z');
    assert.equal(periodStart('month', at).toISOString(), '2026-12-01T00:00:00.000Z');
    assert.equal(periodEnd('month', at).toISOString(), '2027-01-01T00:00:00.000Z');
    const midnight = new Date('2027-01-01T00:00:00.000Z');
    assert.equal(periodStart('day', midnight).toISOString(), midnight.toISOString());
  });

  it('a debit adds to the limits of the categories it draws from, nothing to others', () => {
    const charges = spendingCharges(
      [
        { category: 'standard', period: 'day', credits: 10 },
        { category: 'standard', period: 'month', credits: 100 },
        { category: 'premium', period: 'day', credits: 5 },
      ],
      [{ category: 'standard', amount: 4 }],
      new Date('2026-11-27T15:00:00Z'),
    );
    assert.deepEqual(
      charges.map((c) => [c.period, c.amount, c.cap, c.periodStart.toISOString()]),
      [
        ['day', 4, 10, '2026-11-27T00:00:00.000Z'],
        ['month', 4, 100, '2026-11-01T00:00:00.000Z'],
      ],
    );
  });

  it('each credential is its own spender; an ID token is none', () => {
    assert.equal(spenderOf({ kind: 'api_key', apiKeyId: 'key_1' }), 'key_1');
    assert.equal(
      spenderOf({ kind: 'mcp_token', clientId: 'https://c.example/m' }),
      'mcp:https://c.example/m',
    );
    assert.equal(spenderOf({ kind: 'id_token', issuer: 'i', subject: 's' }), null);
  });

  it('every problem of a set of limits is named by its field', () => {
    const problems = limitProblems({
      credits: [
        { category: '', period: 'day', credits: 1.5 },
        { category: 'standard', period: 'week' as 'day', credits: 1 },
        { category: 'standard', period: 'week' as 'day', credits: 2 },
      ],
      kinds: [],
      modelIds: null,
    });
    assert.deepEqual(
      problems.map((p) => p.field),
      [
        'limits.credits[0].category',
        'limits.credits[0].credits',
        'limits.credits[1].period',
        'limits.credits[2].period',
        'limits.credits[2]',
        'limits.kinds',
      ],
    );
    assert.deepEqual(
      limitProblems({
        credits: [{ category: 'standard', period: 'month', credits: 1 }],
        kinds: null,
        modelIds: ['m'],
      }),
      [],
    );
  });
});
