// Usage charts: everyone's own usage on the console. Every number comes from `usageReport`
// (submissions by UTC day of submission); nothing is estimated in the browser.

import { chartFigure, lastDays, seriesByDay } from './charts.js';
import { api } from './client.js';
import { h } from './dom.js';

const reportQuery = `query ($from: DateTime!, $to: DateTime!, $groupBy: [UsageDimension!]!) {
  usageReport(from: $from, to: $to, groupBy: $groupBy) {
    day modelId backend submissions finishes { code count }
    creditsCharged creditsRefunded providerCalls providerFailures } }`;

const report = async (range, groupBy) =>
  (await api(reportQuery, { from: range.from, to: range.to, groupBy })).usageReport;

/** The signed-in account's credits per day and model over the last 30 days (every account). */
export async function renderOwnUsage(root) {
  const range = lastDays(30);
  const rows = await report(range, ['DAY', 'MODEL']);
  if (rows.length === 0) {
    root.replaceChildren(
      h('p', { id: 'own-usage-empty' }, 'Nothing submitted in the last 30 days.'),
    );
    return;
  }
  root.replaceChildren(
    chartFigure({
      id: 'own-usage-chart',
      title: 'Credits spent per day by model, refunds taken off, last 30 days',
      unit: 'credits',
      x: range.days,
      series: seriesByDay(rows, range.days, 'modelId', (r) => r.creditsCharged - r.creditsRefunded),
    }),
  );
}
