// Decisions per limit, served with the other series at the admin listener's
// /metrics. Labelled by the limit's id only: ids come from the config, so the
// series stay few, and no client address, header value or key reaches them.
import { Counter } from 'prom-client';
import { resilienceRegistry } from '../limiter/metrics.js';

export type LimitOutcome = 'allowed' | 'limited' | 'unavailable';

const decisions = new Counter({
  name: 'sluice_limit_decisions_total',
  help: 'Gateway decisions per limit id, by outcome (allowed, limited, unavailable: store down and the rule says closed)',
  labelNames: ['limit', 'outcome'] as const,
  registers: [resilienceRegistry],
});

/** The counters of one limit, bound once so that counting costs no label lookup per request. */
export class LimitCounters {
  private readonly bound: Record<LimitOutcome, { inc(): void }>;

  constructor(limitId: string) {
    this.bound = {
      allowed: decisions.labels(limitId, 'allowed'),
      limited: decisions.labels(limitId, 'limited'),
      unavailable: decisions.labels(limitId, 'unavailable'),
    };
  }

  count(outcome: LimitOutcome): void {
    this.bound[outcome].inc();
  }
}

/** Counters for every limit of the config, by limit id. */
export function countersFor(routes: readonly { limits: readonly { id: string }[] }[]): ReadonlyMap<string, LimitCounters> {
  const out = new Map<string, LimitCounters>();
  for (const route of routes) for (const limit of route.limits) out.set(limit.id, new LimitCounters(limit.id));
  return out;
}
