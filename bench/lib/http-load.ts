// HTTP load on loopback. Saturation: autocannon, closed loop, 64 connections.
// Paced: one request every 1000/rate ms on an undici pool, fired by a 1 ms
// timer loop (Node timers have 1 ms resolution, so at 2,500/s it fires 2 or 3
// due requests per wake-up; `pool` takes e.g. TLS and HTTP/2 options); latency counts from each request's scheduled
// time, so a slow server cannot hide its queue (no coordinated omission).
import autocannon from 'autocannon';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { LatencyRecorder, round } from './latency.js';

export interface LoadResult {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Responses that were not 2xx, and transport errors. */
  non2xx: number;
  errors: number;
  /** Requests completed inside the window (what CPU per request divides by). */
  completed: number;
  /** What the errors were (autocannon's reqError messages), where the load reports them. */
  errorKinds?: Record<string, number>;
}

export const TENANTS = Array.from({ length: 10 }, (_, i) => `bench-tenant-${i}`);
const PATH = '/orders';

export async function saturate(url: string, durationMs: number, connections = 64): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections,
    pipelining: 1,
    duration: durationMs / 1000,
    requests: TENANTS.map((key) => ({ method: 'GET', path: PATH, headers: { 'x-api-key': key } })),
  });
  const completed = result.requests.total;
  return {
    requestsPerSec: round(completed / result.duration),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    completed,
  };
}

export async function paced(url: string, ratePerSec: number, durationMs: number, options: Pool.Options = {}): Promise<LoadResult & { offeredPerSec: number }> {
  const pool = new Pool(url, { connections: 64, pipelining: 1, ...options });
  const recorder = new LatencyRecorder();
  const interval = 1000 / ratePerSec;
  let sent = 0;
  let completed = 0;
  let non2xx = 0;
  let errors = 0;
  const inFlight = new Set<Promise<void>>();
  const fire = (scheduled: number, i: number) => {
    const request = pool
      .request({ method: 'GET', path: PATH, headers: { 'x-api-key': TENANTS[i % TENANTS.length]! } })
      .then(async (response) => {
        await response.body.dump();
        recorder.recordMs(performance.now() - scheduled);
        completed++;
        if (response.statusCode < 200 || response.statusCode > 299) non2xx++;
      })
      .catch(() => {
        errors++;
      });
    inFlight.add(request);
    void request.finally(() => inFlight.delete(request));
  };
  const start = performance.now() + 5;
  const end = start + durationMs;
  while (performance.now() < end) {
    const now = performance.now();
    while (start + sent * interval <= Math.min(now, end)) {
      fire(start + sent * interval, sent);
      sent++;
    }
    await sleep(1);
  }
  const elapsed = performance.now() - start;
  await Promise.race([Promise.all(inFlight), sleep(10_000)]);
  await pool.close().catch(() => {});
  const latency = recorder.summary();
  return {
    offeredPerSec: round((sent / durationMs) * 1000),
    requestsPerSec: round((completed / elapsed) * 1000),
    p50Ms: round(latency.p50Us / 1000, 3),
    p99Ms: round(latency.p99Us / 1000, 3),
    non2xx,
    errors,
    completed,
  };
}
