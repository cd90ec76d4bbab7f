// Charts of the console: uPlot (assets/uplot.js, the package's own ES module from node_modules)
// draws on a canvas; beside it, a legend, a caption that says the totals in words, and a table
// of every number drawn — the text alternative, for screen readers and for anyone who would
// rather read. uPlot sets sizes through element.style, which the Content-Security-Policy allows
// (it forbids only inline <style> and style attributes).

import { h, table } from './dom.js';
import uPlot from './uplot.js';

/** Distinct on a light and a dark background; series beyond eight reuse them. */
const palette = [
  '#3155d6',
  '#c2410c',
  '#15803d',
  '#9333ea',
  '#b91c1c',
  '#0e7490',
  '#a16207',
  '#be185d',
];
const daySeconds = 86_400;

const isoOf = (seconds) => new Date(seconds * 1000).toISOString();
export const dayText = (seconds) => isoOf(seconds).slice(0, 10);
export const timeText = (seconds) => `${isoOf(seconds).slice(0, 16).replace('T', ' ')} UTC`;

/**
 * The last `count` UTC days, today included: `from` and `to` for a usage report ([from, to)),
 * and each day's start in seconds.
 */
export function lastDays(count = 30, now = Date.now()) {
  const today = Math.floor(now / 1000 / daySeconds) * daySeconds;
  const days = Array.from({ length: count }, (_, i) => today - (count - 1 - i) * daySeconds);
  return { from: isoOf(days[0]), to: isoOf(today + daySeconds), days };
}

/**
 * Usage rows grouped by DAY and one other dimension → a series for each value of `key`, one
 * number a day (`value(row)`), in the order of their totals, largest first.
 */
export function seriesByDay(rows, days, key, value, none = '(none)') {
  const index = new Map(days.map((day, i) => [day, i]));
  const series = new Map();
  for (const row of rows) {
    const i = index.get(Date.parse(row.day) / 1000);
    if (i === undefined) continue;
    const label = key === null ? none : (row[key] ?? none);
    let values = series.get(label);
    if (values === undefined) {
      values = days.map(() => 0);
      series.set(label, values);
    }
    values[i] += value(row);
  }
  return [...series]
    .map(([label, values]) => ({ label, values }))
    .sort((a, b) => total(b.values) - total(a.values) || a.label.localeCompare(b.label));
}

const total = (values) => values.reduce((sum, v) => sum + (v ?? 0), 0);
const round = (n) => Math.round(n * 100) / 100;

/** Each series' total, as a caption says it: "mdl_a 12, mdl_b 3". */
const totals = (series) => series.map((s) => `${s.label} ${round(total(s.values))}`).join(', ');

/**
 * A figure: a line chart of `series` ({label, values}) over `x` (seconds), its legend, a
 * caption (`summary(series)`, each series' total by default), and the same numbers as a table.
 * `format` writes an x value in the table (a UTC day by default); `whole` counts get whole
 * ticks. The chart is drawn once the figure has a width, and follows it when that changes.
 */
export function chartFigure({
  id,
  title,
  unit,
  x,
  series,
  format = dayText,
  xLabel = 'Day (UTC)',
  summary = (all) => `Totals (${unit}): ${totals(all) || 'none'}`,
  whole = true,
}) {
  const colours = series.map((_, i) => palette[i % palette.length]);
  const plot = h('div', {
    class: 'chart',
    role: 'img',
    'aria-label': `${title}: a chart; the numbers are in the table below it.`,
  });
  const legend = h(
    'ul',
    { class: 'legend', 'aria-hidden': 'true' },
    series.map((s, i) => {
      const swatch = h('span', { class: 'swatch' });
      swatch.style.background = colours[i];
      return h('li', {}, swatch, s.label);
    }),
  );
  const numbers = table(
    `${title} (${unit})`,
    [xLabel, ...series.map((s) => s.label)],
    x.map((value, i) => [format(value), ...series.map((s) => String(round(s.values[i] ?? 0)))]),
    { 'data-chart-table': id },
  );
  const figure = h(
    'figure',
    { id, class: 'chart-figure' },
    plot,
    legend,
    h('figcaption', {}, `${title}. ${summary(series)}.`),
    h('details', {}, h('summary', {}, 'The numbers'), numbers),
  );
  drawWhenSized(plot, {
    unit,
    data: [x, ...series.map((s) => s.values)],
    series: series.map((s, i) => ({ label: s.label, stroke: colours[i] })),
    dayTicks: format === dayText,
    whole,
  });
  return figure;
}

function drawWhenSized(holder, d) {
  let chart;
  const observer = new ResizeObserver(() => {
    if (!holder.isConnected) {
      observer.disconnect();
      chart?.destroy();
      return;
    }
    const width = Math.floor(holder.clientWidth);
    if (width === 0) return;
    if (chart === undefined) chart = new uPlot(options(d, width), d.data, holder);
    else chart.setSize({ width, height: chart.height });
  });
  observer.observe(holder);
}

function options(d, width) {
  const ink = getComputedStyle(document.body).color;
  const grid = { stroke: 'rgba(128, 128, 128, 0.25)', width: 1 };
  return {
    width,
    height: 220,
    legend: { show: false },
    // Days are UTC days, as the usage report counts them; so are the axis labels.
    tzDate: (seconds) => uPlot.tzDate(new Date(seconds * 1000), 'Etc/UTC'),
    scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    axes: [
      {
        stroke: ink,
        grid,
        ...(d.dayTicks ? { values: '{MMM} {D}', space: 50 } : {}),
      },
      {
        stroke: ink,
        grid,
        label: d.unit,
        size: 50,
        // Counts have no halves: ticks at whole numbers only.
        ...(d.whole
          ? { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 1e5, 1e6] }
          : {}),
      },
    ],
    series: [{}, ...d.series.map((s) => ({ ...s, width: 2, points: { show: true, size: 5 } }))],
  };
}
