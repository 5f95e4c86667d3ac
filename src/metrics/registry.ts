// Prometheus counters of the resilience layer, in a registry of their own that
// the admin listener serves at GET /metrics (src/admin/server.ts); the gateway
// port serves no metrics. Module-level: every engine of the process adds to the
// same series. prom-client is loaded when the registry or a counter is first
// read (a scrape, the gateway's own metrics): until then, as in a library that
// never scrapes, an increment is a number in a map (lazy-metrics.ts).
import { lazyCounter, lazyGauge, lazyRegistry } from './lazy-metrics.js';

export const resilienceRegistry = lazyRegistry();

/** Decisions not made by the shared store's script, by source (fallback, open, closed, cache). */
export const degradedDecisions = lazyCounter(resilienceRegistry, {
  name: 'sluice_degraded_decisions_total',
  help: 'Decisions made without a Redis round trip or without Redis, by source',
  labelNames: ['source'] as const,
});

export const storeFailures = lazyCounter(resilienceRegistry, {
  name: 'sluice_store_failures_total',
  help: 'Redis calls that failed, by reason (deadline, error, breaker_open)',
  labelNames: ['reason'] as const,
});

export const breakerTransitions = lazyCounter(resilienceRegistry, {
  name: 'sluice_breaker_transitions_total',
  help: 'Circuit breaker state changes, by new state',
  labelNames: ['state'] as const,
});

export const leaseCalls = lazyCounter(resilienceRegistry, {
  name: 'sluice_lease_calls_total',
  help: 'Lease script calls (hot keys), by outcome (granted, refused)',
  labelNames: ['outcome'] as const,
});

export const failoverRestoredUnits = lazyCounter(resilienceRegistry, {
  name: 'sluice_failover_restored_units_total',
  help: 'Units a bucket came back without after the breaker opened (writes a failed master had not replicated), charged back',
});

export const unreplicatedAdmissions = lazyCounter(resilienceRegistry, {
  name: 'sluice_redis_wait_unreplicated_total',
  help: 'Admissions decided in Redis with store.wait on whose write fewer replicas than asked acknowledged within its timeout (the admission stood)',
});

export const fallbackChargedUnits = lazyCounter(resilienceRegistry, {
  name: 'sluice_fallback_charged_units_total',
  help: 'Units the local fallback admitted while the breaker was open, charged to Redis once it closed',
});

/**
 * Redis replies that came after the deadline had the request decided locally,
 * by what the reconciliation did: `agreed` (Redis decided the same),
 * `refunded` (a false refusal: Redis admitted what the fallback refused, the
 * units went back to the bucket), `charged` (an over-admission: Redis refused
 * what the fallback admitted, charged to the bucket as a debt), `uncorrected`
 * (the policy has no adjust, or the correction failed), `delay_mismatch`
 * (both admitted a shaped request, but the client was told another delay than
 * Redis's queue gave it: a place in the queue lost or invented; the units
 * are the same, nothing to correct), `lost` (no reply).
 */
export const lateReplies = lazyCounter(resilienceRegistry, {
  name: 'sluice_late_replies_total',
  help: 'Redis replies that arrived after the deadline, by reconciliation outcome',
  labelNames: ['outcome'] as const,
});

/** The deadlines the gauge below shows, one per engine over Redis (a gateway process has one). */
const deadlines = new Set<() => number>();

/** Shows an engine's deadline in /metrics until the returned function is called. */
export function showDeadline(ms: () => number): () => void {
  deadlines.add(ms);
  return () => deadlines.delete(ms);
}

lazyGauge(resilienceRegistry, {
  name: 'sluice_store_deadline_ms',
  help: 'What a decision waits for Redis now, ms: store.deadlineMs, or the adaptive deadline (0: no engine over Redis)',
  // Over workers: the longest (each adapts to the same Redis).
  aggregator: 'max',
  collect() {
    this.set(deadlines.size === 0 ? 0 : Math.max(...Array.from(deadlines, (ms) => ms())));
  },
});
