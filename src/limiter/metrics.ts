// Prometheus counters of the resilience layer, in a registry of their own that
// the admin listener serves at GET /metrics (src/admin/server.ts); the gateway
// port serves no metrics. Module-level: every engine of the process adds to the
// same series.
import { Counter, Registry } from 'prom-client';

export const resilienceRegistry = new Registry();

/** Decisions not made by the shared store's script, by source (fallback, open, closed, cache). */
export const degradedDecisions = new Counter({
  name: 'sluice_degraded_decisions_total',
  help: 'Decisions made without a Redis round trip or without Redis, by source',
  labelNames: ['source'] as const,
  registers: [resilienceRegistry],
});

export const storeFailures = new Counter({
  name: 'sluice_store_failures_total',
  help: 'Redis calls that failed, by reason (deadline, error, breaker_open)',
  labelNames: ['reason'] as const,
  registers: [resilienceRegistry],
});

export const breakerTransitions = new Counter({
  name: 'sluice_breaker_transitions_total',
  help: 'Circuit breaker state changes, by new state',
  labelNames: ['state'] as const,
  registers: [resilienceRegistry],
});

export const leaseCalls = new Counter({
  name: 'sluice_lease_calls_total',
  help: 'Lease script calls (hot keys), by outcome (granted, refused)',
  labelNames: ['outcome'] as const,
  registers: [resilienceRegistry],
});

export const fallbackChargedUnits = new Counter({
  name: 'sluice_fallback_charged_units_total',
  help: 'Units the local fallback admitted while the breaker was open, charged to Redis once it closed',
  registers: [resilienceRegistry],
});
