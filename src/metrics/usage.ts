// What settling reservations counted, at the admin listener's /metrics.
// Labelled by limit id (from the config) and result only: no tenant, no key.
// Lazy (lazy-metrics.ts): the library's adapters settle too, and `import 'sluice/express'` loads no prom-client.
import { lazyCounter } from './lazy-metrics.js';
import { resilienceRegistry } from './registry.js';

/**
 * usage: the response's usage was charged; fallback_<why>: it could not be
 * read (usage-value.ts) and the fallback was charged; not_counted: the status
 * is not counted (`count:`), the reservation refunded; no_response: the
 * upstream never answered, the reservation refunded; counted: a `count:`
 * limit's answer counts as reserved; store_down: the
 * reservation was decided without the store (fallback, open), left as it is.
 */
export const usageSettlements = lazyCounter(resilienceRegistry, {
  name: 'sluice_usage_settlements_total',
  help: 'Reservations of limits priced by usage or counted by outcome, settled, by limit id and result (usage, fallback_missing, fallback_not_a_number, fallback_negative, fallback_above_capacity, fallback_too_large, fallback_cut, not_counted, counted, no_response, store_down)',
  labelNames: ['limit', 'result'] as const,
});

export const usageSettleFailures = lazyCounter(resilienceRegistry, {
  name: 'sluice_usage_settle_failures_total',
  help: "Settlements the store did not take (unreachable, past the admin deadline): the reservation stays as charged, by limit id",
  labelNames: ['limit'] as const,
});

/** Units charged (positive) and given back (negative) by settlements, by limit id, apart from the reservations themselves. */
export const usageSettledUnits = lazyCounter(resilienceRegistry, {
  name: 'sluice_usage_settled_units_total',
  help: 'Units settlements charged beyond their reservations (direction=charged) or gave back (direction=refunded), by limit id',
  labelNames: ['limit', 'direction'] as const,
});

/**
 * Usage reported after the fact to the decision service (Envoy's
 * `apply_on_stream_done` call, forward-auth's POST /usage), by face and
 * result: charged; capped (more than the limit's whole capacity, the capacity
 * charged); failed (the store did not take it).
 */
export const usageReports = lazyCounter(resilienceRegistry, {
  name: 'sluice_usage_reports_total',
  help: 'Usage reports charged by the decision service, per limit charged, by face (envoy, forward_auth) and result (charged, capped, failed)',
  labelNames: ['face', 'result'] as const,
});

export const usageReportedUnits = lazyCounter(resilienceRegistry, {
  name: 'sluice_usage_reported_units_total',
  help: 'Units usage reports charged to the decision service\'s buckets, by face (envoy, forward_auth)',
  labelNames: ['face'] as const,
});
