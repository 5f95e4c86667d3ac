// What one engine decided lately, for the dashboard: per route, the decisions of
// each recent second; the most refused (tenant, route) pairs; degraded decisions
// by source. Memory is fixed: routes are capped, tenants only live in the
// fixed-size heavy-hitters structures.
import type { Decision, DecisionSource } from '../core/decision.js';
import { type HeavyHitter, RecentHeavyHitters } from './heavy-hitters.js';
import { ALLOWED, MAX_ROUTES, OTHER_ROUTE, REFUSED, routeTotals, SHADOW_REFUSED } from './metrics.js';
import { type Outcome, RING_SECONDS, SecondRing, type Series } from './second-ring.js';

/** Counters per heavy-hitters structure; the page lists the first TOP_SHOWN. */
const HITTER_CAPACITY = 64;
export const TOP_SHOWN = 20;
/** "The last few minutes": this window and the previous one. */
const HITTER_WINDOW_MS = 60_000;

interface RouteStats {
  ring: SecondRing;
  /** The process-wide Prometheus totals of the route. */
  totals: Float64Array;
}

export interface TopEntry {
  tenant: string;
  route: string;
  count: number;
}

export interface StatsView {
  /** The last second the series cover (Unix seconds); they run oldest first. */
  endSecond: number;
  routes: Record<string, Series>;
  /** Refusals enforced, heaviest first. */
  top: TopEntry[];
  /** Refusals shadow rules would have made. */
  shadowTop: TopEntry[];
  degraded: Partial<Record<DecisionSource, number>>;
}

export class DecisionStats {
  private readonly routes = new Map<string, RouteStats>();
  private readonly degraded: Partial<Record<DecisionSource, number>> = {};
  private readonly refused: RecentHeavyHitters;
  private readonly shadowRefused: RecentHeavyHitters;

  constructor(now: number) {
    this.refused = new RecentHeavyHitters(HITTER_CAPACITY, HITTER_WINDOW_MS, now);
    this.shadowRefused = new RecentHeavyHitters(HITTER_CAPACITY, HITTER_WINDOW_MS, now);
  }

  /** One decision as the store made it (before shadow mode turned a refusal into an admission). */
  record(tenant: string, route: string, decision: Decision, shadow: boolean, now: number): void {
    const stats = this.routes.get(route) ?? this.addRoute(route);
    let outcome: Outcome = 'allowed';
    let index = ALLOWED;
    if (!decision.allowed) {
      outcome = shadow ? 'shadowRefused' : 'refused';
      index = shadow ? SHADOW_REFUSED : REFUSED;
      (shadow ? this.shadowRefused : this.refused).add(`${tenant} ${route}`, now);
    }
    stats.ring.add(Math.floor(now / 1000), outcome);
    stats.totals[index]!++;
    const source = decision.source;
    if (source !== 'redis' && source !== 'memory') this.degraded[source] = (this.degraded[source] ?? 0) + 1;
  }

  view(now: number): StatsView {
    const endSecond = Math.floor(now / 1000);
    const routes: Record<string, Series> = {};
    for (const [route, stats] of this.routes) routes[route] = stats.ring.series(endSecond, RING_SECONDS);
    return {
      endSecond,
      routes,
      top: this.refused.top(TOP_SHOWN, now).map(toEntry),
      shadowTop: this.shadowRefused.top(TOP_SHOWN, now).map(toEntry),
      degraded: { ...this.degraded },
    };
  }

  private addRoute(route: string): RouteStats {
    if (this.routes.size >= MAX_ROUTES) {
      const other = this.routes.get(OTHER_ROUTE);
      if (other) return other;
      route = OTHER_ROUTE;
    }
    const stats = { ring: new SecondRing(), totals: routeTotals(route) };
    this.routes.set(route, stats);
    return stats;
  }
}

function toEntry(hitter: HeavyHitter): TopEntry {
  const space = hitter.key.indexOf(' ');
  return { tenant: hitter.key.slice(0, space), route: hitter.key.slice(space + 1), count: hitter.count };
}
