// Per upstream instance, served with the other series at /metrics: requests by
// outcome, ejections (passive health) and the time to the response headers.
// Labelled by route id and instance URL, both from the config: the series stay few.
import { Counter, Histogram } from 'prom-client';
import { CounterBatch, HistogramBatch } from './batched-counts.js';
import { resilienceRegistry } from './registry.js';

/** The per-request outcomes (ok, retried) and latencies are counted in memory until read (batched-counts.ts). */
const batch = new CounterBatch<'route' | 'upstream' | 'outcome'>();

export const upstreamRequests = new Counter({
  name: 'sluice_upstream_requests_total',
  help: 'Requests sent to each upstream instance, by outcome (ok: it answered; retried: it failed and the request went to another instance; the gateway error otherwise)',
  labelNames: ['route', 'upstream', 'outcome'] as const,
  registers: [resilienceRegistry],
  collect() {
    batch.flush(this);
  },
});

export const upstreamEjections = new Counter({
  name: 'sluice_upstream_ejections_total',
  help: 'Times an upstream instance was taken out of rotation after it refused a connection or timed out',
  labelNames: ['route', 'upstream'] as const,
  registers: [resilienceRegistry],
});

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const latencies = new HistogramBatch<'route' | 'upstream'>(LATENCY_BUCKETS);

export const upstreamLatency = new Histogram({
  name: 'sluice_upstream_response_seconds',
  help: "Time from sending a request to an upstream instance to its response headers",
  labelNames: ['route', 'upstream'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [resilienceRegistry],
  collect() {
    latencies.flush(this);
  },
});

/** The same counts as plain numbers, for the dashboard's instance list (read every second, no scrape). */
export interface UpstreamTally {
  route: string;
  url: string;
  requests: number;
  /** Failed (retried elsewhere, or answered with a gateway error). */
  errors: number;
  ejections: number;
  latencyMsSum: number;
  latencyCount: number;
}

/** Routes × instance URLs of the config; capped so reload after reload cannot grow it without bound. */
const MAX_TALLIES = 512;
const tallies = new Map<string, UpstreamTally>();
const spare: UpstreamTally = { route: '', url: '', requests: 0, errors: 0, ejections: 0, latencyMsSum: 0, latencyCount: 0 };

export function upstreamTally(route: string, url: string): UpstreamTally {
  const key = `${route} ${url}`;
  let tally = tallies.get(key);
  if (!tally) {
    if (tallies.size >= MAX_TALLIES) return spare;
    tally = { route, url, requests: 0, errors: 0, ejections: 0, latencyMsSum: 0, latencyCount: 0 };
    tallies.set(key, tally);
  }
  return tally;
}

export function upstreamTallies(): UpstreamTally[] {
  return [...tallies.values()];
}

/** One instance's series on the request path, bound once (a label lookup per request costs CPU on every request). */
export interface InstanceMetrics {
  ok: { inc(): void };
  retried: { inc(): void };
  latency: { observe(seconds: number): void };
  tally: UpstreamTally;
}

export function instanceMetrics(route: string, url: string): InstanceMetrics {
  const tally = upstreamTally(route, url);
  const ok = batch.bind({ route, upstream: url, outcome: 'ok' });
  const retried = batch.bind({ route, upstream: url, outcome: 'retried' });
  const latency = latencies.bind({ route, upstream: url });
  return {
    tally,
    ok: { inc: () => { ok.inc(); tally.requests++; } },
    retried: { inc: () => { retried.inc(); tally.requests++; tally.errors++; } },
    latency: { observe: (seconds) => { latency.observe(seconds); tally.latencyMsSum += seconds * 1000; tally.latencyCount++; } },
  };
}
