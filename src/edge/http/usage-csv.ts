import {
  finishCodes,
  type UsageDimension,
  type UsageRow,
  usageDimensions,
} from '../../domain/usage.ts';

/** Each dimension's CSV column and value. */
const dimensionCells: Readonly<
  Record<UsageDimension, { header: string; cell: (row: UsageRow) => string | null }>
> = {
  day: { header: 'day', cell: (r) => r.day?.toISOString() ?? null },
  account: { header: 'account_id', cell: (r) => r.accountId },
  model: { header: 'model_id', cell: (r) => r.modelId },
  kind: { header: 'kind', cell: (r) => r.kind },
  backend: { header: 'backend', cell: (r) => r.backend },
  credential: { header: 'credential', cell: (r) => r.credential },
};

/**
 * A usage report as CSV (RFC 4180: CRLF line ends, a header line): the grouped dimensions'
 * columns in the report's order, then one count per finish code there is and the measures.
 * Text cells are quoted when they hold a comma, a quote or a line end, and one that begins like
 * a spreadsheet formula (= + - @, tab, carriage return) is prefixed with ' so a spreadsheet
 * shows it instead of running it (OWASP "CSV Injection"). Numbers are written as they are.
 */
export function usageCsv(groupBy: readonly UsageDimension[], rows: readonly UsageRow[]): string {
  const dims = usageDimensions.filter((d) => groupBy.includes(d)).map((d) => dimensionCells[d]);
  const header = [
    ...dims.map((d) => d.header),
    'submissions',
    ...finishCodes.map((code) => `finished_${code}`),
    'credits_charged',
    'credits_refunded',
    'run_seconds',
    'provider_calls',
    'provider_failures',
  ];
  const lines = rows.map((row) =>
    [
      ...dims.map((d) => textCell(d.cell(row))),
      row.submissions,
      ...finishCodes.map((code) => row.finishes.find((f) => f.code === code)?.count ?? 0),
      row.creditsCharged,
      row.creditsRefunded,
      row.runSeconds,
      row.providerCalls,
      row.providerFailures,
    ].join(','),
  );
  return `${[header.join(','), ...lines].join('\r\n')}\r\n`;
}

/** One text cell, safe to open in a spreadsheet; null is an empty cell. */
export function textCell(value: string | null): string {
  if (value === null) return '';
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
