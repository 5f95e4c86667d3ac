// One instance's state as the dashboard shows it, and the merge of every
// instance's into the cluster-wide view. Series are aligned on Unix seconds.
import type { DecisionSource } from '../core/decision.js';
import type { EngineMode } from '../limiter/engine/engine.js';
import { type StatsView, TOP_SHOWN, type TopEntry } from './decision-stats.js';
import { RING_SECONDS, type Series } from './second-ring.js';

export interface InstanceSnapshot {
  id: string;
  version: string;
  /** When it was taken (Unix ms, the instance's clock). */
  at: number;
  mode: EngineMode;
  /** The circuit breaker in front of Redis; `none` with the memory store. Half-open shows as open. */
  breaker: 'closed' | 'open' | 'none';
  /** The divisor of the fallback limit. */
  instances: number;
  detail?: string;
  stats: StatsView;
  /** When the instance started (Unix ms): uptime is `at - startedAt`. */
  startedAt?: number;
  /** The gateway's URL and the admin listener's, when it has one. */
  address?: string;
  adminAddress?: string;
  /** The last snapshot write's round trip to Redis (ms). */
  redisRttMs?: number;
  /** Rule-store changes this instance has applied, when the last one came (Unix ms), and the rule-set version its cache has applied (migrations/006). */
  rules?: { changes: number; lastChangeAt?: number; version?: number; storeId?: string };
  upstreams?: UpstreamRow[];
  /** Present while the history's writes fail: the batches waiting to be written. */
  history?: { behind: number };
  /** Set by a clean stop: the page shows the instance as gone for a while instead of dropping it. */
  stoppedAt?: number;
}

/** One upstream instance of one route, as this gateway instance saw it since it started. */
export interface UpstreamRow {
  route: string;
  url: string;
  requests: number;
  errors: number;
  ejections: number;
  /** Mean time to the response headers (ms); absent before the first answer. */
  meanMs?: number;
}

export type InstanceSummary = Omit<InstanceSnapshot, 'stats'> & {
  degraded: StatsView['degraded'];
  self: boolean;
  /** `stopped`: a clean stop; `lost`: no snapshot for a while (crashed, or cut from Redis). */
  gone?: 'stopped' | 'lost';
};

export interface ClusterView {
  /** Unix seconds of the series' points, oldest first. */
  seconds: number[];
  routes: Record<string, Series>;
  top: TopEntry[];
  shadowTop: TopEntry[];
  degraded: Partial<Record<DecisionSource, number>>;
  instances: InstanceSummary[];
}

/** `gone`: instances that stopped or went quiet lately, listed but not counted in the series. */
export function mergeSnapshots(snapshots: InstanceSnapshot[], selfId: string, gone: InstanceSnapshot[] = []): ClusterView {
  const endSecond = Math.max(...snapshots.map((s) => s.stats.endSecond));
  const seconds = Array.from({ length: RING_SECONDS }, (_, i) => endSecond - RING_SECONDS + 1 + i);
  const routes: Record<string, Series> = {};
  const degraded: Partial<Record<DecisionSource, number>> = {};
  for (const snapshot of snapshots) {
    const shift = endSecond - snapshot.stats.endSecond;
    for (const [route, series] of Object.entries(snapshot.stats.routes)) {
      routes[route] ??= { allowed: zeros(), refused: zeros(), shadowRefused: zeros() };
      const into = routes[route];
      for (const outcome of ['allowed', 'refused', 'shadowRefused'] as const) {
        series[outcome].forEach((n, i) => {
          const at = i - shift;
          if (at >= 0 && at < RING_SECONDS) into[outcome][at]! += n;
        });
      }
    }
    for (const [source, n] of Object.entries(snapshot.stats.degraded)) {
      degraded[source as DecisionSource] = (degraded[source as DecisionSource] ?? 0) + (n ?? 0);
    }
  }
  return {
    seconds,
    routes,
    top: mergeTop(snapshots.map((s) => s.stats.top)),
    shadowTop: mergeTop(snapshots.map((s) => s.stats.shadowTop)),
    degraded,
    instances: [
      ...snapshots.map(({ stats, ...rest }) => ({ ...rest, degraded: stats.degraded, self: rest.id === selfId })),
      ...gone.map(({ stats, ...rest }): InstanceSummary => ({ ...rest, degraded: stats.degraded, self: false, gone: rest.stoppedAt ? 'stopped' : 'lost' })),
    ].sort((a, b) => (a.id < b.id ? -1 : 1)),
  };
}

function zeros(): number[] {
  return new Array<number>(RING_SECONDS).fill(0);
}

function mergeTop(lists: TopEntry[][]): TopEntry[] {
  const merged = new Map<string, TopEntry>();
  for (const entry of lists.flat()) {
    const key = `${entry.tenant} ${entry.route}`;
    const seen = merged.get(key);
    if (seen) seen.count += entry.count;
    else merged.set(key, { ...entry });
  }
  return [...merged.values()].sort((a, b) => b.count - a.count || (a.tenant < b.tenant ? -1 : 1)).slice(0, TOP_SHOWN);
}

/** A snapshot read from Redis, checked enough that a stranger's value cannot break the page. */
export function parseSnapshot(text: string): InstanceSnapshot | undefined {
  try {
    const value = JSON.parse(text) as InstanceSnapshot;
    if (typeof value?.id !== 'string' || typeof value.at !== 'number' || typeof value.stats?.endSecond !== 'number') return undefined;
    if (typeof value.stats.routes !== 'object' || !Array.isArray(value.stats.top) || !Array.isArray(value.stats.shadowTop)) return undefined;
    return value;
  } catch {
    return undefined;
  }
}
