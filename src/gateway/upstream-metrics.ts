// Per upstream instance, served with the other series at /metrics: requests by
// outcome, ejections (passive health) and the time to the response headers.
// Labelled by route id and instance URL, both from the config: the series stay few.
import { Counter, Histogram } from 'prom-client';
import { resilienceRegistry } from '../limiter/metrics.js';

export const upstreamRequests = new Counter({
  name: 'sluice_upstream_requests_total',
  help: 'Requests sent to each upstream instance, by outcome (ok: it answered; retried: it failed and the request went to another instance; the gateway error otherwise)',
  labelNames: ['route', 'upstream', 'outcome'] as const,
  registers: [resilienceRegistry],
});

export const upstreamEjections = new Counter({
  name: 'sluice_upstream_ejections_total',
  help: 'Times an upstream instance was taken out of rotation after it refused a connection or timed out',
  labelNames: ['route', 'upstream'] as const,
  registers: [resilienceRegistry],
});

export const upstreamLatency = new Histogram({
  name: 'sluice_upstream_response_seconds',
  help: "Time from sending a request to an upstream instance to its response headers",
  labelNames: ['route', 'upstream'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [resilienceRegistry],
});

/** One instance's series on the request path, bound once (a label lookup per request costs CPU on every request). */
export interface InstanceMetrics {
  ok: { inc(): void };
  retried: { inc(): void };
  latency: { observe(seconds: number): void };
}

export function instanceMetrics(route: string, url: string): InstanceMetrics {
  return { ok: upstreamRequests.labels(route, url, 'ok'), retried: upstreamRequests.labels(route, url, 'retried'), latency: upstreamLatency.labels(route, url) };
}
