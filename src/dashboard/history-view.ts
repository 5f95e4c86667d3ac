// The history as the page draws it: for a range (5 min, 1 h, 1 day), per route
// a series per count and latency quantile, one point per bucket, the range's
// totals, and the events inside it.
import { addCell, COUNT_NAMES, type Cell, emptyCell, type Latencies, latenciesOf } from './history-cells.js';
import { type BucketCells, bucketStarts, type HistoryEvent, type HistoryStore, ONE_MINUTE, TEN_SECONDS } from './history-store.js';

export const RANGES = { '5m': { seconds: 300, resolution: TEN_SECONDS }, '1h': { seconds: 3_600, resolution: TEN_SECONDS }, '1d': { seconds: 86_400, resolution: ONE_MINUTE } } as const;
export type RangeName = keyof typeof RANGES;

const LATENCY_NAMES = ['requestP50', 'requestP99', 'decisionP50', 'decisionP99'] as const;

export interface RouteHistory {
  /** Per count name (allowed, refused, shadow, s2xx, …), one number per bucket. */
  counts: Record<string, number[]>;
  /** Per quantile (requestP50, …), ms per bucket; null where the bucket had no request. */
  latency: Record<string, (number | null)[]>;
  totals: Record<string, number>;
  totalLatency: Latencies;
}

export interface HistoryView {
  range: RangeName;
  stepSeconds: number;
  /** Unix seconds of each bucket's start, oldest first. */
  starts: number[];
  routes: Record<string, RouteHistory>;
  events: HistoryEvent[];
  scope: 'cluster' | 'local';
}

export function isRange(value: string | null): value is RangeName {
  return value !== null && Object.hasOwn(RANGES, value);
}

export async function historyView(store: HistoryStore, range: RangeName, nowMs: number): Promise<HistoryView> {
  const { seconds, resolution } = RANGES[range];
  const to = Math.floor(nowMs / 1000);
  const from = to - seconds + resolution.seconds;
  const starts = bucketStarts(resolution, from, to);
  const [buckets, events] = await Promise.all([store.read(resolution, from, to), store.readEvents(starts[0]! * 1000)]);
  return { range, stepSeconds: resolution.seconds, starts, routes: routesOf(buckets, starts), events, scope: store.scope };
}

function routesOf(buckets: Map<number, BucketCells>, starts: number[]): Record<string, RouteHistory> {
  const names = new Set<string>();
  for (const cells of buckets.values()) for (const route of cells.keys()) names.add(route);
  const routes: Record<string, RouteHistory> = {};
  for (const route of [...names].sort()) {
    const total = emptyCell();
    const history: RouteHistory = { counts: {}, latency: {}, totals: {}, totalLatency: {} };
    for (const name of COUNT_NAMES) history.counts[name] = [];
    for (const name of LATENCY_NAMES) history.latency[name] = [];
    for (const start of starts) {
      const cell: Cell = buckets.get(start)?.get(route) ?? emptyCell();
      addCell(total, cell);
      COUNT_NAMES.forEach((name, i) => {
        history.counts[name]!.push(cell[i]!);
      });
      const latencies = latenciesOf(cell);
      for (const name of LATENCY_NAMES) history.latency[name]!.push(latencies[name] ?? null);
    }
    COUNT_NAMES.forEach((name, i) => {
      history.totals[name] = total[i]!;
    });
    history.totalLatency = latenciesOf(total);
    routes[route] = history;
  }
  return routes;
}

