// The history: per route, decisions, status classes and latency over the range
// picked (5 min, 1 h, 1 day), summed over the cluster, with the range's totals
// beside the charts; events (breaker, starts and stops, rule changes, reloads)
// drawn as vertical lines on every chart and listed in a table.
import { element, row } from './api.js';

const charts = new Map();
const COUNTS = [
  ['allowed', 'allowed', ''],
  ['refused', 'refused (429 / 503)', 'warn'],
  ['shadow', 'shadow: would refuse', ''],
  ['s2xx', '2xx (and 1xx, 3xx)', ''],
  ['s4xx', '4xx other than 429', 'warn'],
  ['s429', '429', 'warn'],
  ['s5xx', '5xx other than 502/504', 'bad'],
  ['s502_504', '502 / 504 (upstream)', 'bad'],
];
const LATENCY = [
  ['requestP50', 'request p50'],
  ['requestP99', 'request p99'],
  ['decisionP50', 'decision p50'],
  ['decisionP99', 'decision p99'],
];
const EVENT_COLOURS = { 'breaker-open': '#b00020', 'breaker-close': '#1a7f37', 'instance-start': '#0550ae', 'instance-stop': '#57606a', 'config-reload': '#8250df' };
const EVENT_WORDS = {
  'breaker-open': 'breaker opened (Redis away)',
  'breaker-close': 'breaker closed (Redis back)',
  'instance-start': 'instance started',
  'instance-stop': 'instance stopped',
  'rule-change': 'rule changed',
  'override-change': 'override changed',
  'key-change': 'API key changed',
  'config-reload': 'config reloaded',
};
const RANGE_WORDS = { '5m': 'the last 5 minutes', '1h': 'the last hour', '1d': 'the last day' };
let events = [];

export function renderHistory(history) {
  events = history.events;
  const step = history.stepSeconds === 60 ? '1-min' : '10-s';
  document.getElementById('history-scope').textContent =
    history.scope === 'cluster' ? `Summed over every instance sharing the Redis, in ${step} buckets.` : `This instance only (memory store: no Redis to share history through), in ${step} buckets.`;
  const container = document.getElementById('history-charts');
  const routes = Object.keys(history.routes);
  document.getElementById('no-history').hidden = routes.length > 0;
  for (const [route, chart] of charts) if (!routes.includes(route)) removeChart(route, chart);
  for (const route of routes) {
    let chart = charts.get(route);
    if (!chart) {
      chart = createBlock(container, route);
      charts.set(route, chart);
    }
    fill(chart, history, history.routes[route], step);
  }
  renderEvents(history.events);
}

function fill(chart, history, data, step) {
  const x = history.starts;
  chart.decisions.setData([x, data.counts.allowed, data.counts.refused, data.counts.shadow]);
  chart.statuses.setData([x, data.counts.s2xx, data.counts.s4xx, data.counts.s429, data.counts.s5xx, data.counts.s502_504]);
  chart.latency.setData([x, ...LATENCY.map(([name]) => data.latency[name])]);
  chart.caption.textContent = `Totals over ${RANGE_WORDS[history.range] ?? history.range} (${step} buckets)`;
  const rows = COUNTS.map(([name, label, trouble]) => {
    const n = data.totals[name];
    const tr = row([label, n]);
    tr.dataset.count = name;
    if (trouble && n > 0) tr.className = `trouble-${trouble}`;
    return tr;
  });
  for (const [name, label] of LATENCY) {
    const ms = data.totalLatency[name];
    const tr = row([label, ms === undefined ? '–' : `≤ ${ms} ms`]);
    tr.dataset.latency = name;
    if (name === 'requestP99' && ms >= 1000) tr.className = 'trouble-bad';
    rows.push(tr);
  }
  chart.tbody.replaceChildren(...rows);
}

function createBlock(container, route) {
  const block = element('div', undefined, { class: 'history-block', 'data-history-route': route });
  block.append(element('h3', `Route ${route}`));
  const table = element('table', undefined, { class: 'history-totals' });
  const caption = element('caption');
  const head = element('thead');
  const headRow = element('tr');
  for (const name of ['What', 'Over the range']) headRow.append(element('th', name, { scope: 'col' }));
  head.append(headRow);
  const tbody = element('tbody');
  table.append(caption, head, tbody);
  const plots = element('div', undefined, { class: 'history-plots' });
  const line = element('div', undefined, { class: 'history-row' });
  line.append(table, plots);
  block.append(line);
  container.append(block);
  // Three charts in a row beside the totals, as wide as the page allows.
  const width = Math.max(260, Math.min(420, Math.floor((container.clientWidth - 380) / 3) - 24));
  const decisions = plot(plots, width, route, 'Decisions per bucket', 'requests', [
    { label: 'allowed', stroke: '#1a7f37', width: 2 },
    { label: 'refused', stroke: '#b00020', width: 2, dash: [8, 4] },
    { label: 'shadow: would refuse', stroke: '#6f42c1', width: 2, dash: [2, 3] },
  ]);
  const statuses = plot(plots, width, route, 'Status classes per bucket', 'responses', [
    { label: '2xx', stroke: '#1a7f37', width: 2 },
    { label: '4xx', stroke: '#9a6700', width: 2, dash: [6, 3] },
    { label: '429', stroke: '#bc4c00', width: 2, dash: [2, 3] },
    { label: '5xx', stroke: '#b00020', width: 2, dash: [10, 3, 2, 3] },
    { label: '502/504', stroke: '#82071e', width: 3 },
  ]);
  const latency = plot(plots, width, route, 'Latency p50 / p99', 'ms', [
    { label: 'request p50', stroke: '#0550ae', width: 2 },
    { label: 'request p99', stroke: '#0550ae', width: 2, dash: [8, 4] },
    { label: 'decision p50', stroke: '#8250df', width: 2 },
    { label: 'decision p99', stroke: '#8250df', width: 2, dash: [8, 4] },
  ], 'log');
  return { route, block, tbody, caption, decisions, statuses, latency };
}

function plot(parent, width, route, title, unit, series, distr) {
  const figure = element('div', undefined, { class: 'history-plot' });
  const box = element('div', undefined, { class: 'plot', role: 'img', 'aria-label': `${title} on route ${route}; the table beside it gives the totals` });
  figure.append(element('h4', title), box);
  parent.append(figure);
  const y = distr === 'log' ? { distr: 3, log: 10 } : {};
  return new window.uPlot(
    {
      width,
      height: 170,
      scales: { x: { time: true }, y },
      axes: [{}, { label: unit, size: 60 }],
      series: [{}, ...series],
      legend: { live: false },
      hooks: { draw: [drawEvents] },
    },
    [[], ...series.map(() => [])],
    box,
  );
}

/** Each event in the range as a vertical line in its colour (the table below names them). */
function drawEvents(u) {
  const { ctx, bbox } = u;
  ctx.save();
  ctx.lineWidth = 2 * devicePixelRatio;
  for (const event of events) {
    const x = u.valToPos(event.at / 1000, 'x', true);
    if (x < bbox.left || x > bbox.left + bbox.width) continue;
    ctx.strokeStyle = EVENT_COLOURS[event.kind] ?? '#9a6700';
    ctx.setLineDash(event.kind.startsWith('breaker') ? [] : [4 * devicePixelRatio, 3 * devicePixelRatio]);
    ctx.beginPath();
    ctx.moveTo(x, bbox.top);
    ctx.lineTo(x, bbox.top + bbox.height);
    ctx.stroke();
  }
  ctx.restore();
}

function renderEvents(list) {
  const tbody = document.querySelector('#events tbody');
  if (list.length === 0) {
    tbody.replaceChildren(row(['', 'no event in this range', '', '']));
    return;
  }
  tbody.replaceChildren(
    ...list
      .slice(-50)
      .reverse()
      .map((event) => {
        const tr = row([new Date(event.at).toLocaleTimeString(), EVENT_WORDS[event.kind] ?? event.kind, event.instance, event.detail ?? '']);
        tr.dataset.event = event.kind;
        if (event.kind === 'breaker-open') tr.className = 'trouble-bad';
        return tr;
      }),
  );
}

function removeChart(route, chart) {
  for (const name of ['decisions', 'statuses', 'latency']) chart[name].destroy();
  chart.block.remove();
  charts.delete(route);
}

export function clearHistory() {
  for (const [route, chart] of charts) removeChart(route, chart);
  events = [];
  document.querySelector('#events tbody').replaceChildren();
  document.getElementById('history-scope').textContent = '';
}

/** The range the operator picked (5m, 1h, 1d). */
export function pickedRange() {
  return document.querySelector('input[name="range"]:checked')?.value ?? '1h';
}
