// Usage charts: everyone's own usage on the console, and the operator's charts on the admin
// Usage page. Every number comes from `usageReport` (submissions by UTC day of submission),
// `adminQueueHistory` (the queue over the last day, read back from the tasks' own times) or, for
// the latest waits, `adminTasks`; nothing is estimated in the browser.

import { chartFigure, lastDays, seriesByDay, timeText } from './charts.js';
import { api } from './client.js';
import { h } from './dom.js';

const reportQuery = `query ($from: DateTime!, $to: DateTime!, $groupBy: [UsageDimension!]!) {
  usageReport(from: $from, to: $to, groupBy: $groupBy) {
    day modelId backend submissions finishes { code count }
    creditsCharged creditsRefunded providerCalls providerFailures } }`;

const historyQuery = `query ($from: DateTime!, $to: DateTime!) {
  adminQueueHistory(from: $from, to: $to, points: 49) {
    at queued running submitted meanWaitSeconds } }`;

/** The queue every half hour over the last day, the last point now. */
async function queueHistory(now = Date.now()) {
  const to = new Date(now);
  const from = new Date(now - 86_400_000);
  const { adminQueueHistory } = await api(historyQuery, {
    from: from.toISOString(),
    to: to.toISOString(),
  });
  return adminQueueHistory.map((p) => ({ ...p, at: Date.parse(p.at) / 1000 }));
}

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

const finished = (row, test) =>
  row.finishes.filter((f) => test(f.code)).reduce((sum, f) => sum + f.count, 0);

/** The admin Usage page: every account's submissions, failures and waits. */
export async function renderAdminUsage(root) {
  const range = lastDays(30);
  const [byModel, byBackend, byDay, recent, history] = await Promise.all([
    report(range, ['DAY', 'MODEL']),
    report(range, ['DAY', 'BACKEND']),
    report(range, ['DAY']),
    api(`{ adminTasks(first: 100) { nodes { taskId createdAt startedAt } } }`),
    queueHistory(),
  ]);
  const pooled = byBackend.filter((r) => r.backend !== null);
  const waits = recent.adminTasks.nodes
    .filter((t) => t.startedAt !== null)
    .map((t) => ({
      at: Date.parse(t.createdAt) / 1000,
      seconds: (Date.parse(t.startedAt) - Date.parse(t.createdAt)) / 1000,
    }))
    .sort((a, b) => a.at - b.at);
  root.replaceChildren(
    chartFigure({
      id: 'usage-by-model-chart',
      title: 'Submissions per day by model, every account, last 30 days',
      unit: 'submissions',
      x: range.days,
      series: seriesByDay(byModel, range.days, 'modelId', (r) => r.submissions),
    }),
    pooled.length === 0
      ? h(
          'p',
          { id: 'failures-by-backend-empty' },
          'No runs on a pool’s backends in the last 30 days (built-in engines record none).',
        )
      : chartFigure({
          id: 'failures-by-backend-chart',
          title: 'Failed runs per day by backend, last 30 days',
          unit: 'failed runs',
          x: range.days,
          series: seriesByDay(pooled, range.days, 'backend', (r) => r.providerFailures),
        }),
    chartFigure({
      id: 'flow-chart',
      title: 'Submitted, succeeded, failed and not yet finished, by day of submission',
      unit: 'tasks',
      x: range.days,
      series: [
        ['submitted', (r) => r.submissions],
        ['succeeded', (r) => finished(r, (code) => code === 0)],
        ['failed', (r) => finished(r, (code) => code !== 0)],
        ['not finished yet', (r) => r.submissions - finished(r, () => true)],
      ].map(([label, value]) => ({
        label,
        values: seriesByDay(byDay, range.days, null, value)[0]?.values ?? range.days.map(() => 0),
      })),
    }),
    chartFigure({
      id: 'queue-depth-chart',
      title: 'Queue depth every half hour, last 24 hours',
      unit: 'tasks',
      x: history.map((p) => p.at),
      series: [
        { label: 'queued', values: history.map((p) => p.queued) },
        { label: 'running', values: history.map((p) => p.running) },
      ],
      format: timeText,
      xLabel: 'At',
      summary: ([queued, running]) =>
        `now ${queued.values.at(-1)} queued and ${running.values.at(-1)} running; at most ` +
        `${Math.max(...queued.values)} queued`,
    }),
    chartFigure({
      id: 'queue-wait-chart',
      title: 'Mean wait from submission to start, by half hour of submission, last 24 hours',
      unit: 'seconds',
      x: history.map((p) => p.at),
      series: [
        {
          label: 'mean wait',
          values: history.map((p) => Math.round((p.meanWaitSeconds ?? 0) * 10) / 10),
        },
      ],
      format: timeText,
      xLabel: 'Submitted from',
      whole: false,
      summary: () =>
        `${history.reduce((n, p) => n + p.submitted, 0)} submitted; a half hour with no ` +
        'started task reads 0',
    }),
    waits.length === 0
      ? h('p', { id: 'wait-empty' }, 'No task of the latest hundred has started yet.')
      : chartFigure({
          id: 'wait-chart',
          title: 'Wait from submission to start, the latest 100 tasks',
          unit: 'seconds',
          x: waits.map((w) => w.at),
          series: [{ label: 'wait', values: waits.map((w) => Math.round(w.seconds * 10) / 10) }],
          format: timeText,
          xLabel: 'Submitted',
          whole: false,
          summary: ([s]) => {
            const sorted = [...s.values].sort((a, b) => a - b);
            const median = sorted[Math.floor((sorted.length - 1) / 2)];
            return `${sorted.length} started tasks: median ${median} s, longest ${sorted.at(-1)} s`;
          },
        }),
    h(
      'p',
      { class: 'detail' },
      'The queue’s depth is read back from the tasks’ own times (submitted, started, ' +
        'finished): a task that waited more than a day before a point is not counted in it. ' +
        '“Not finished yet” counts the tasks of each day still queued or running.',
    ),
  );
}
