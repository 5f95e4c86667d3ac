// One row of the accuracy bench: what a variant admitted against its exact
// figure, each tenant's policy model run over the instants its requests
// actually happened (sent, or run by Redis), so the machine's delays do not
// count against the limiter.
import type { PolicyName, Rule } from '../../src/policies/rule.js';
import { type InstanceCounts, modelExpected, modelExpectedAt } from './accuracy-plan.js';
import { round } from './latency.js';

export interface Variant {
  name: string;
  group: 'spread' | 'one instance' | 'skewed ±50 ms' | 'leasing' | 'cluster, 1,000 tenants' | 'policy';
  k: number;
  policy: PolicyName;
  rule: Rule;
  tenants: number;
  ratePerTenant: number;
  allOnOne: boolean;
  skewed: boolean;
}

export interface AccuracyRow {
  variant: string;
  group: Variant['group'];
  k: number;
  policy: PolicyName;
  sent: number;
  /** First to last request actually sent, all instances together (the schedule says durationMs). */
  spanMs: number;
  allowed: number;
  /**
   * The exact figure: per tenant, the policy's model over the instants Redis ran
   * each request's script (MONITOR, `expectedFrom` 'Redis'), or over the instants
   * the requests were sent ('sent': leasing, the cluster, or a request Redis never saw).
   */
  expected: number;
  expectedFrom: 'Redis' | 'sent';
  /** The same model over the instants the requests were sent. */
  expectedAtSent: number;
  /** The same model over the instants the decisions came back. */
  expectedAtDecided: number;
  /** What the schedule alone would have given (the figure before send times were recorded), for comparison. */
  scheduled: number;
  /** allowed ÷ expected */
  ratio: number;
  /** The target range of allowed ÷ expected: ±1 % without leasing, the leasing bound with it. */
  bound: { min: number; max: number };
  withinBound: boolean;
  bySource: Record<string, number>;
}

/**
 * Without leasing: ±1 %. With it (docs/resilience.md, Hot keys), every unit still comes out of
 * the Redis bucket, so from a fresh bucket the cluster never admits more than
 * the exact figure; it may admit less by what is leased and unspent at the end
 * (at most K × batch) and what waits in Redis for a whole batch (batch − 1).
 */
export function boundOf(variant: Variant, expected: number): { min: number; max: number } {
  if (variant.rule.lease === undefined) return { min: 0.99, max: 1.01 };
  const batch = variant.rule.lease.batch;
  return { min: round(1 - (variant.k * batch + batch - 1) / expected, 3), max: 1 };
}

export const tenantsOf = (variant: Variant): string[] => Array.from({ length: variant.tenants }, (_, t) => `acc-${variant.name.replace(/[^A-Za-z0-9]+/g, '-')}-${t}`);

/** The figure the schedule alone gives: capacity + rate × d for one token bucket tenant, else the model over the schedule. */
function scheduledExpected(variant: Variant, startAt: number, durationMs: number): number {
  const rule = variant.rule;
  if (variant.tenants === 1 && rule.policy === 'token_bucket') return rule.capacity + (rule.refillPerSecond * durationMs) / 1000;
  return modelExpected(rule, startAt, variant.ratePerTenant, durationMs) * variant.tenants;
}

export function rowOf(variant: Variant, mine: InstanceCounts[], startAt: number, durationMs: number, redisTimes?: Map<string, number[]>): AccuracyRow {
  const bySource: Record<string, number> = {};
  for (const c of mine) for (const [source, n] of Object.entries(c.bySource)) bySource[source] = (bySource[source] ?? 0) + n;
  // Each tenant is one bucket: its model runs over the instants of its requests, every instance merged.
  const figures = { redis: 0, sent: 0, decided: 0 };
  // Redis's own instants only when Redis saw every request once (no lease, no breaker-open decision).
  let redisSawAll = redisTimes !== undefined && variant.rule.lease === undefined;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  tenantsOf(variant).forEach((tenant, t) => {
    const sent = mine.flatMap((c) => c.sentAt[t] ?? []);
    const atRedis = redisTimes?.get(tenant) ?? [];
    if (atRedis.length !== sent.length) redisSawAll = false;
    figures.redis += modelExpectedAt(variant.rule, atRedis);
    figures.sent += modelExpectedAt(variant.rule, sent);
    figures.decided += modelExpectedAt(variant.rule, mine.flatMap((c) => c.decidedAt[t] ?? []));
    for (const at of sent) {
      first = Math.min(first, at);
      last = Math.max(last, at);
    }
  });
  const expected = redisSawAll ? figures.redis : figures.sent;
  const allowed = mine.reduce((sum, c) => sum + c.allowed, 0);
  const bound = boundOf(variant, expected);
  return {
    variant: variant.name,
    group: variant.group,
    k: variant.k,
    policy: variant.policy,
    sent: mine.reduce((sum, c) => sum + c.sent, 0),
    spanMs: last >= first ? round(last - first, 1) : 0,
    allowed,
    expected,
    expectedFrom: redisSawAll ? 'Redis' : 'sent',
    expectedAtSent: figures.sent,
    expectedAtDecided: figures.decided,
    scheduled: round(scheduledExpected(variant, startAt, durationMs), 1),
    ratio: round(allowed / expected, 3),
    bound,
    // One unit of slack each way: a request's instant and Redis's clock can straddle a refill or a window's end.
    withinBound: allowed >= bound.min * expected - 1 && allowed <= bound.max * expected + 1,
    bySource,
  };
}
