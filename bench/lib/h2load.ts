// Saturation over HTTP/1.1 and HTTP/2, plain or TLS, by nghttp2's h2load (C,
// one thread, in its own process: the load generator is not the target's
// bottleneck, and the same one drives every protocol of the edge rows).
// 64 connections, one request at a time on each (`-m 1`), as autocannon's rows.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { LoadResult } from './http-load.js';
import { round } from './latency.js';

const run = promisify(execFile);
export const H2LOAD = '/usr/bin/h2load';

export type Protocol = 'h1' | 'h2';

/** GET /orders as `key` for `durationMs`; h2load reports no percentiles, so the p50/p99 fields are NaN (paced runs give them). */
export async function h2loadSaturate(url: string, protocol: Protocol, durationMs: number, key: string, connections = 64): Promise<LoadResult> {
  const args = ['-c', String(connections), '-m', '1', '-t', '1', '-D', `${Math.round(durationMs)}ms`, '-H', `x-api-key: ${key}`];
  if (protocol === 'h1') args.push('--h1');
  // On this loaded machine h2load 1.52 once kept a few HTTP/1.1 clients going past -D for minutes: such a run is cut and run again, once.
  const once = () => run(H2LOAD, [...args, `${url}/orders`], { maxBuffer: 1 << 20, timeout: durationMs + 30_000 });
  const { stdout } = await once().catch(once);
  return parseH2load(stdout);
}

export function parseH2load(out: string): LoadResult {
  const count = (pattern: RegExp) => Number(pattern.exec(out)?.[1] ?? Number.NaN);
  const done = count(/(\d+) done/);
  const seconds = count(/finished in ([\d.]+)s/);
  return {
    requestsPerSec: round(count(/finished in [\d.]+s, ([\d.]+) req\/s/)),
    p50Ms: Number.NaN,
    p99Ms: Number.NaN,
    non2xx: count(/(\d+) 3xx/) + count(/(\d+) 4xx/) + count(/(\d+) 5xx/),
    errors: count(/(\d+) errored/) + count(/(\d+) timeout/) + (Number.isNaN(seconds) ? 1 : 0),
    completed: done,
  };
}
