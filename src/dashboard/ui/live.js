// The live part of the page, drawn from the overview polled every second, each
// part only while its view shows: a chart per route (uPlot) with a table of the
// same numbers beside it, the most limited tenants, the instances and degraded
// decisions. Series differ by line style, not only colour.
import { element, row } from './api.js';
import { clearInstances, renderInstances } from './instances.js';
import { clearSummary } from './summary.js';

const charts = new Map();
const DEGRADED_MEANING = {
  fallback: 'local limiter with 1/N of the limit while Redis is away',
  cache: 'local cache: a refusal remembered, or a leased token',
  open: 'Redis away and the rule says allow',
  closed: 'Redis away and the rule says refuse (503)',
  shadow: 'shadow rule',
};

/** Every view: which instances the page adds up. */
export function renderScope(overview) {
  const scope = document.getElementById('scope');
  const live = overview.instances.filter((instance) => !instance.gone).length;
  scope.textContent = overview.scope === 'cluster' ? `Cluster-wide view: ${live} instance${live === 1 ? '' : 's'} publishing` : `This instance only: ${overview.scopeNote}`;
}

/** The instances view: the instance table, upstreams and degraded decisions. */
export function renderInstanceView(overview) {
  renderInstances(overview.instances, overview.scope);
  renderDegraded(overview.degraded);
}

export function renderCharts(overview) {
  const container = document.getElementById('charts');
  const routes = Object.keys(overview.routes).sort();
  document.getElementById('no-traffic').hidden = routes.length > 0;
  // A route no instance serves any more goes: a chart frozen on its last numbers would read as live.
  for (const [route, chart] of charts) if (!routes.includes(route)) removeChart(route, chart);
  for (const route of routes) {
    const series = overview.routes[route];
    let chart = charts.get(route);
    if (!chart) {
      chart = createChart(container, route);
      charts.set(route, chart);
    }
    chart.plot.setData([overview.seconds, series.allowed, series.refused, series.shadowRefused]);
    const sum = (values) => values.reduce((a, b) => a + b, 0);
    const last = (values) => values.slice(-5).reduce((a, b) => a + b, 0);
    chart.tbody.replaceChildren(
      row(['allowed', sum(series.allowed), last(series.allowed)]),
      row(['refused', sum(series.refused), last(series.refused)]),
      row(['shadow: would refuse', sum(series.shadowRefused), last(series.shadowRefused)]),
    );
  }
}

function createChart(container, route) {
  const block = element('div', undefined, { class: 'route-block', 'data-route': route });
  const title = element('h3', `Route ${route}`);
  const plotBox = element('div', undefined, { class: 'plot', role: 'img', 'aria-label': `Chart of decisions per second on route ${route}; the table beside it gives the numbers` });
  const table = element('table', undefined, { class: 'route-table' });
  table.append(element('caption', `Route ${route}: decisions in the last minute and the last 5 seconds`));
  const head = element('thead');
  const headRow = element('tr');
  for (const name of ['Outcome', 'Last 60 s', 'Last 5 s']) headRow.append(element('th', name, { scope: 'col' }));
  head.append(headRow);
  const tbody = element('tbody');
  table.append(head, tbody);
  block.append(title, plotBox, table);
  container.append(block);
  const plot = new window.uPlot(
    {
      width: Math.min(640, Math.max(320, container.clientWidth - 360)),
      height: 220,
      scales: { x: { time: true } },
      axes: [{}, { label: 'per second' }],
      series: [
        {},
        { label: 'allowed', stroke: '#1a7f37', width: 2 },
        { label: 'refused', stroke: '#b00020', width: 2, dash: [8, 4] },
        { label: 'shadow: would refuse', stroke: '#6f42c1', width: 2, dash: [2, 3] },
      ],
    },
    [[], [], [], []],
    plotBox,
  );
  return { plot, tbody, block };
}

function removeChart(route, chart) {
  chart.plot.destroy();
  chart.block.remove();
  charts.delete(route);
}

/** Signing out: every chart and table of the live view emptied. */
export function clearOverview() {
  for (const [route, chart] of charts) removeChart(route, chart);
  for (const id of ['top', 'degraded']) document.querySelector(`#${id} tbody`).replaceChildren();
  clearInstances();
  clearSummary();
  document.getElementById('scope').textContent = '';
}

export function renderTop(top) {
  const tbody = document.querySelector('#top tbody');
  if (top.length === 0) {
    tbody.replaceChildren(row(['', 'no refusals in the last minutes', '', '']));
    return;
  }
  tbody.replaceChildren(...top.map((entry, i) => row([i + 1, entry.tenant, entry.route, entry.count])));
}

function renderDegraded(degraded) {
  const tbody = document.querySelector('#degraded tbody');
  const entries = Object.entries(degraded).sort((a, b) => b[1] - a[1]);
  if (entries.length === 0) {
    tbody.replaceChildren(row(['none', 0, 'every decision was made by the shared store']));
    return;
  }
  tbody.replaceChildren(...entries.map(([source, count]) => row([source, count, DEGRADED_MEANING[source] ?? ''])));
}
