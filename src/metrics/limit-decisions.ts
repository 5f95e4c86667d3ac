// Decisions per limit, served with the other series at the admin listener's
// /metrics. Labelled by the limit's id only: ids come from the config, so the
// series stay few, and no client address, header value or key reaches them.
import { Counter } from 'prom-client';
import { type BatchedCount, CounterBatch } from './batched-counts.js';
import { resilienceRegistry } from './registry.js';

/**
 * allowed: the request passed and this limit was charged; limited: this limit
 * refused it; not_charged: this limit would have admitted it, another refused,
 * so nothing was taken from it; unavailable: store down and the rule says closed.
 */
export type LimitOutcome = 'allowed' | 'limited' | 'not_charged' | 'unavailable';

const batch = new CounterBatch<'limit' | 'outcome'>();

// Registered on the admin registry, counted through `batch`: nothing here holds it.
new Counter({
  name: 'sluice_limit_decisions_total',
  help: 'Gateway decisions per limit id, by outcome (allowed; limited: this limit refused; not_charged: another limit refused, nothing taken from this one; unavailable: store down and the rule says closed)',
  labelNames: ['limit', 'outcome'] as const,
  registers: [resilienceRegistry],
  collect() {
    batch.flush(this);
  },
});

/** The counters of one limit, bound once and counted in memory until read (batched-counts.ts). */
export class LimitCounters {
  private readonly bound: Record<LimitOutcome, BatchedCount>;

  constructor(limitId: string) {
    this.bound = {
      allowed: batch.bind({ limit: limitId, outcome: 'allowed' }),
      limited: batch.bind({ limit: limitId, outcome: 'limited' }),
      not_charged: batch.bind({ limit: limitId, outcome: 'not_charged' }),
      unavailable: batch.bind({ limit: limitId, outcome: 'unavailable' }),
    };
  }

  count(outcome: LimitOutcome): void {
    this.bound[outcome].inc();
  }
}

/** Counters for every limit of the config (a route's limits include the global ones), by limit id. */
export function countersFor(routes: readonly { limits: readonly { id: string }[]; concurrency?: readonly { id: string }[] }[]): ReadonlyMap<string, LimitCounters> {
  const out = new Map<string, LimitCounters>();
  for (const route of routes) for (const limit of [...route.limits, ...(route.concurrency ?? [])]) out.set(limit.id, new LimitCounters(limit.id));
  return out;
}

/** Each limit's counter for one request: refused by it, allowed, or not charged because another refused (also when not consulted). */
export function countDecision(counters: ReadonlyMap<string, LimitCounters>, limits: readonly { limitId: string }[], outcome: { allowed: boolean; decisions: readonly { allowed: boolean; source: string }[] }): void {
  limits.forEach((limit, i) => {
    const decision = outcome.decisions[i]!;
    const counter = counters.get(limit.limitId);
    if (decision.source === 'closed' && !decision.allowed) counter?.count('unavailable');
    else if (!decision.allowed) counter?.count('limited');
    else counter?.count(outcome.allowed ? 'allowed' : 'not_charged');
  });
}
