import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { usageQueryProblems, usageRequestOfText } from '../../src/domain/usage.ts';
import { AppError } from '../../src/shared/errors.ts';

const day = 86_400_000;
const from = new Date('2026-01-01T00:00:00Z');
const fields = (problems: Array<{ field: string }>) => problems.map((p) => p.field);

describe('usage report rules (issue 32)', () => {
  it('a range is half-open, later than its start, and at most 366 days', () => {
    const at = (ms: number) => new Date(from.getTime() + ms);
    assert.deepEqual(usageQueryProblems({ from, to: at(day), groupBy: ['day'] }), []);
    assert.deepEqual(usageQueryProblems({ from, to: at(366 * day), groupBy: ['day'] }), []);
    assert.deepEqual(
      fields(usageQueryProblems({ from, to: at(366 * day + 1), groupBy: ['day'] })),
      ['to'],
    );
    assert.deepEqual(fields(usageQueryProblems({ from, to: from, groupBy: ['day'] })), ['to']);
    assert.deepEqual(fields(usageQueryProblems({ from, to: at(-1), groupBy: ['day'] })), ['to']);
    assert.deepEqual(
      fields(usageQueryProblems({ from: new Date(Number.NaN), to: from, groupBy: ['day'] })),
      ['from'],
    );
  });

  it('groups by at least one dimension there is, each once; every problem is listed', () => {
    const to = new Date(from.getTime() + day);
    assert.deepEqual(fields(usageQueryProblems({ from, to, groupBy: [] })), ['groupBy']);
    assert.deepEqual(fields(usageQueryProblems({ from, to, groupBy: ['planet'] })), ['groupBy']);
    assert.deepEqual(fields(usageQueryProblems({ from, to, groupBy: ['day', 'day'] })), [
      'groupBy',
    ]);
    assert.deepEqual(fields(usageQueryProblems({ from: to, to: from, groupBy: [] })), [
      'to',
      'groupBy',
    ]);
  });

  it('text (the CSV URL, the command line) is read as ISO dates, a dimension list and a kind', () => {
    const request = usageRequestOfText({
      from: '2026-01-01',
      to: '2026-02-01T00:00:00Z',
      groupBy: 'Day, model',
      kind: 'video',
    });
    assert.equal(request.from.toISOString(), '2026-01-01T00:00:00.000Z');
    assert.equal(request.to.toISOString(), '2026-02-01T00:00:00.000Z');
    assert.deepEqual(request.groupBy, ['day', 'model']);
    assert.equal(request.filter?.kind, 'video');
    assert.deepEqual(usageRequestOfText({ from: '2026-01-01', to: '2026-01-02' }).groupBy, ['day']);
    const refused = (text: Record<string, string>) => {
      try {
        usageRequestOfText(text);
      } catch (error) {
        assert.ok(error instanceof AppError);
        assert.equal(error.code, '120001');
        return fields(error.details.problems as Array<{ field: string }>);
      }
      assert.fail('accepted');
    };
    assert.deepEqual(refused({ to: '2026-01-02' }), ['from']);
    assert.deepEqual(refused({ from: 'yesterday', to: '2026-13-45' }), ['from', 'to']);
    assert.deepEqual(refused({ from: '2026-01-01', to: '2026-01-02', kind: 'music' }), ['kind']);
  });
});
