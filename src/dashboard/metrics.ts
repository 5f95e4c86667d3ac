// Prometheus series for the Grafana dashboard, served by the admin listener's
// GET /metrics beside the resilience counters. The hot path only bumps plain
// numbers (no label hashing per request); they become series when scraped.
// Labels stay bounded: route ids (at most MAX_ROUTES), outcomes, sources, modes.
import { Gauge, type Metric, Registry } from 'prom-client';
import type { DecisionSource } from '../core/decision.js';
import type { EngineMode } from '../limiter/engine/engine.js';
import { REQUEST_EDGES_MS, statusIndex } from './history-cells.js';

export const dashboardRegistry = new Registry();

/** Routes counted one by one; more (never with the config's own routes) share one series. */
export const MAX_ROUTES = 256;
export const OTHER_ROUTE = '(other)';
/** Index of each outcome in a route's totals. */
export const ALLOWED = 0;
export const REFUSED = 1;
export const SHADOW_REFUSED = 2;
const OUTCOME_LABELS = ['allowed', 'refused', 'shadow_refused'] as const;

const decisionTotals = new Map<string, Float64Array>();

/** The process-wide totals of one route (allowed, refused, shadow refused). */
export function routeTotals(route: string): Float64Array {
  let totals = decisionTotals.get(route);
  if (!totals) {
    if (decisionTotals.size >= MAX_ROUTES && route !== OTHER_ROUTE) return routeTotals(OTHER_ROUTE);
    totals = new Float64Array(3);
    decisionTotals.set(route, totals);
  }
  return totals;
}

/** Seconds; Redis round trips are sub-millisecond on a LAN, the deadline is tens of ms. */
export const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
interface LatencyCells {
  buckets: Float64Array;
  sum: number;
  count: number;
}
const latency: Partial<Record<DecisionSource, LatencyCells>> = {};

export function observeLatency(source: DecisionSource, seconds: number): void {
  let cells = latency[source];
  if (!cells) {
    cells = { buckets: new Float64Array(LATENCY_BUCKETS.length), sum: 0, count: 0 };
    latency[source] = cells;
  }
  let i = 0;
  while (i < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[i]!) i++;
  if (i < LATENCY_BUCKETS.length) cells.buckets[i]!++;
  cells.sum += seconds;
  cells.count++;
}

type Value = { labels: Record<string, string>; value: number; metricName?: string };

/** A metric read from plain numbers at scrape time; prom-client formats it. */
function scraped(name: string, help: string, type: 'counter' | 'histogram', values: () => Value[]): void {
  const metric = { name, help, type, aggregator: 'sum', get: async () => ({ name, help, type, aggregator: 'sum', values: values() }) };
  dashboardRegistry.registerMetric(metric as unknown as Metric);
}

scraped('sluice_decisions_total', 'Rate-limit decisions, by route id and outcome (allowed, refused, shadow_refused: admitted by a shadow rule that would have refused)', 'counter', () =>
  [...decisionTotals].flatMap(([route, totals]) => OUTCOME_LABELS.map((outcome, i) => ({ labels: { route, outcome }, value: totals[i]! }))),
);

scraped('sluice_decision_latency_seconds', 'Time the engine took to decide, by decision source: the Redis round trip for source=redis, local work for the others', 'histogram', () =>
  Object.entries(latency).flatMap(([source, cells]) => {
    let cumulative = 0;
    const rows: Value[] = LATENCY_BUCKETS.map((le, i) => {
      cumulative += cells.buckets[i]!;
      return { metricName: 'sluice_decision_latency_seconds_bucket', labels: { source, le: String(le) }, value: cumulative };
    });
    rows.push({ metricName: 'sluice_decision_latency_seconds_bucket', labels: { source, le: '+Inf' }, value: cells.count });
    rows.push({ metricName: 'sluice_decision_latency_seconds_sum', labels: { source }, value: cells.sum });
    rows.push({ metricName: 'sluice_decision_latency_seconds_count', labels: { source }, value: cells.count });
    return rows;
  }),
);

/** Status classes of sluice_requests_total, in history-cells.ts's order (statusIndex - 3). */
const STATUS_CLASSES = ['2xx', '4xx', '429', '5xx', '502_504'] as const;
/** Whole-request buckets (s): the history's edges, so Grafana and the page agree. */
export const REQUEST_BUCKETS = REQUEST_EDGES_MS.map((ms) => ms / 1000);
interface RequestCells {
  classes: Float64Array;
  buckets: Float64Array;
  sum: number;
  count: number;
}
const requestCells = new Map<string, RequestCells>();

/** One finished request of a route (the gateway's observer calls it with the history). */
export function observeRequest(route: string, status: number, seconds: number): void {
  let cells = requestCells.get(route);
  if (!cells) {
    if (requestCells.size >= MAX_ROUTES && route !== OTHER_ROUTE) {
      observeRequest(OTHER_ROUTE, status, seconds);
      return;
    }
    cells = { classes: new Float64Array(STATUS_CLASSES.length), buckets: new Float64Array(REQUEST_BUCKETS.length), sum: 0, count: 0 };
    requestCells.set(route, cells);
  }
  cells.classes[statusIndex(status) - 3]!++;
  let i = 0;
  while (i < REQUEST_BUCKETS.length && seconds > REQUEST_BUCKETS[i]!) i++;
  if (i < REQUEST_BUCKETS.length) cells.buckets[i]!++;
  cells.sum += seconds;
  cells.count++;
}

scraped('sluice_requests_total', 'Requests the gateway answered, by route id ((no route) when none matched) and status class (2xx with 1xx/3xx, 4xx other than 429, 429, 5xx other than 502/504, 502_504)', 'counter', () =>
  [...requestCells].flatMap(([route, cells]) => STATUS_CLASSES.map((klass, i) => ({ labels: { route, class: klass }, value: cells.classes[i]! }))),
);

scraped('sluice_request_duration_seconds', 'Time from the request reaching the gateway to the end of its response, by route id (the same buckets as the page\'s history)', 'histogram', () =>
  [...requestCells].flatMap(([route, cells]) => {
    let cumulative = 0;
    const rows: Value[] = REQUEST_BUCKETS.map((le, i) => {
      cumulative += cells.buckets[i]!;
      return { metricName: 'sluice_request_duration_seconds_bucket', labels: { route, le: String(le) }, value: cumulative };
    });
    rows.push({ metricName: 'sluice_request_duration_seconds_bucket', labels: { route, le: '+Inf' }, value: cells.count });
    rows.push({ metricName: 'sluice_request_duration_seconds_sum', labels: { route }, value: cells.sum });
    rows.push({ metricName: 'sluice_request_duration_seconds_count', labels: { route }, value: cells.count });
    return rows;
  }),
);

/** What the gauges read: the engine of this process (the last one started, in tests with several). */
export interface EngineProbe {
  mode(): EngineMode;
  instances(): number;
}
let probe: EngineProbe | undefined;
export function setEngineProbe(next: EngineProbe | undefined): void {
  probe = next;
}
export function currentProbe(): EngineProbe | undefined {
  return probe;
}

new Gauge({
  name: 'sluice_instances',
  help: 'Live gateway instances this instance counts (the divisor of the fallback limit; with workers, every worker of every machine); 1 with the memory store',
  registers: [dashboardRegistry],
  // With workers each counts the same members: summed over them it would be N times too high.
  aggregator: 'max',
  collect() {
    this.set(probe?.instances() ?? 1);
  },
});

new Gauge({
  name: 'sluice_engine_mode',
  help: 'Which runtime decides on this instance: 1 for the current mode (memory, redis, fallback), 0 for the others',
  labelNames: ['mode'] as const,
  registers: [dashboardRegistry],
  collect() {
    const current = probe?.mode();
    for (const mode of ['memory', 'redis', 'fallback'] as const) this.set({ mode }, current === mode ? 1 : 0);
  },
});
