import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type UsageRow, usageQueryProblems, usageRequestOfText } from '../../src/domain/usage.ts';
import { textCell, usageCsv } from '../../src/edge/http/usage-csv.ts';
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

  it('CSV cells are quoted when they must be, and never start a formula', () => {
    assert.equal(textCell('mdl_plain'), 'mdl_plain');
    assert.equal(textCell(null), '');
    assert.equal(textCell('a,b'), '"a,b"');
    assert.equal(textCell('say "hi"'), '"say ""hi"""');
    assert.equal(textCell('two\nlines'), '"two\nlines"');
    for (const formula of ['=1+1', '+1', '-1', '@SUM(A1)', '\tx'])
      assert.equal(textCell(formula), `'${formula}`);
    assert.equal(textCell('=HYPERLINK("x","y")'), `"'=HYPERLINK(""x"",""y"")"`);
  });

  it('a CSV has one header line, then one line per row with every finish code', () => {
    const row: UsageRow = {
      day: new Date('2026-01-01T00:00:00Z'),
      accountId: null,
      modelId: '=evil',
      kind: null,
      backend: null,
      credential: null,
      submissions: 3,
      finishes: [
        { code: 0, count: 2 },
        { code: 4, count: 1 },
      ],
      creditsCharged: 9,
      creditsRefunded: 3,
      runSeconds: 1.5,
      providerCalls: 0,
      providerFailures: 0,
    };
    assert.equal(
      usageCsv(['model', 'day'], [row]),
      'day,model_id,submissions,finished_0,finished_1,finished_2,finished_3,finished_4,finished_5,credits_charged,credits_refunded,run_seconds,provider_calls,provider_failures\r\n' +
        "2026-01-01T00:00:00.000Z,'=evil,3,2,0,0,0,1,0,9,3,1.5,0,0\r\n",
    );
  });
});
