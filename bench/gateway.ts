// npm run bench:gateway [-- --quick]
// Requests/s and p50/p99 on loopback for: the upstream alone, Sluice without
// limiting, with the memory store and with Redis, and the peers (Fastify,
// Express, and nginx / HAProxy when installed). Each at saturation (autocannon,
// 64 connections) and at an evenly paced 2,500 req/s. Targets are run in turn
// (A B C … A B C …), repeated; medians with ranges; CPU µs per request of the
// gateway process from /proc.
import { availableParallelism } from 'node:os';
import { type Child, forkServer } from './lib/children.js';
import { isMain, runMain } from './lib/cleanup.js';
import { type LoadResult, paced, saturate } from './lib/http-load.js';
import { median, round } from './lib/latency.js';
import { binaryExists, NGINX_PLAIN, startHaproxy, startNginx } from './lib/native-peers.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';

export const PACED_RATE = 2500;

/** Target names the ratio notes look up (nginx's plain proxy: NGINX_PLAIN). */
const SLUICE = 'Sluice, Redis store';
const EXACT = 'Sluice, Redis store, one script call per request';
const NONE = 'Sluice, no limiter';
const FASTIFY = 'Fastify + http-proxy + rate-limit (Redis)';

export interface Figure {
  median: number;
  min: number;
  max: number;
}

export interface GatewayRow {
  target: string;
  mode: 'saturation' | 'paced';
  requestsPerSec: Figure;
  p50Ms: Figure;
  p99Ms: Figure;
  /** CPU time of the gateway process per completed request (the upstream's own for the upstream row). */
  cpuUsPerRequest: Figure;
  non2xx: number;
  errors: number;
}

export interface GatewayResult {
  rows: GatewayRow[];
  repeats: number;
  skipped: string[];
  notes: string[];
}

const figure = (values: number[]): Figure => ({ median: round(median(values), 3), min: round(Math.min(...values), 3), max: round(Math.max(...values), 3) });

export async function runGatewayBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<GatewayResult> {
  const repeats = pick(options, 1, 5);
  const durationMs = pick(options, 400, 5000);
  const redis = await benchRedis();
  const children: Child[] = [];
  const skipped: string[] = [];
  try {
    progress('gateway: starting upstream, gateways and peers (child processes)');
    const upstream = await forkServer('upstream alone', 'upstream.ts', {});
    children.push(upstream);
    const base = { upstream: upstream.url, redisUrl: redis.url };
    const started = await Promise.all([
      forkServer(NONE, 'sluice.ts', { ...base, limiter: 'none' }),
      forkServer('Sluice, memory store', 'sluice.ts', { ...base, limiter: 'memory' }),
      forkServer(SLUICE, 'sluice.ts', { ...base, limiter: 'redis' }),
      forkServer(EXACT, 'sluice.ts', { ...base, limiter: 'redis', exact: true }),
      forkServer(FASTIFY, 'fastify-peer.ts', base),
      forkServer('Express + http-proxy-middleware + express-rate-limit (Redis)', 'express-peer.ts', base),
    ]);
    children.push(...started);
    if (binaryExists('nginx')) children.push(await startNginx(upstream.url, false), await startNginx(upstream.url));
    else skipped.push('nginx plain proxy and limit_req: no nginx binary');
    if (binaryExists('haproxy')) children.push(await startHaproxy(upstream.url));
    else skipped.push('HAProxy stick table: no haproxy binary');

    const samples: Samples = new Map();
    const record = (target: Child, mode: string, result: LoadResult, cpuUs: number) => {
      const key = `${target.name}\u0000${mode}`;
      samples.set(key, [...(samples.get(key) ?? []), { result, cpuUs: result.completed ? cpuUs / result.completed : Number.NaN }]);
    };
    // Warm each target (JIT, connection pools) before anything is counted.
    for (const target of children) await saturate(target.url, pick(options, 100, 1000));
    for (let repeat = 1; repeat <= repeats; repeat++) {
      for (const target of children) {
        progress(`gateway: run ${repeat}/${repeats}, ${target.name}`);
        let cpu = target.cpuMicros();
        const saturated = await saturate(target.url, durationMs);
        record(target, 'saturation', saturated, target.cpuMicros() - cpu);
        cpu = target.cpuMicros();
        const steady = await paced(target.url, PACED_RATE, durationMs);
        record(target, 'paced', steady, target.cpuMicros() - cpu);
      }
    }

    const rows: GatewayRow[] = [];
    for (const target of children) {
      for (const mode of ['saturation', 'paced'] as const) {
        const runs = samples.get(`${target.name}\u0000${mode}`) ?? [];
        rows.push({
          target: target.name,
          mode,
          requestsPerSec: figure(runs.map((r) => r.result.requestsPerSec)),
          p50Ms: figure(runs.map((r) => r.result.p50Ms)),
          p99Ms: figure(runs.map((r) => r.result.p99Ms)),
          cpuUsPerRequest: figure(runs.map((r) => r.cpuUs)),
          non2xx: runs.reduce((sum, r) => sum + r.result.non2xx, 0),
          errors: runs.reduce((sum, r) => sum + r.result.errors, 0),
        });
      }
    }
    return {
      rows,
      repeats,
      skipped,
      notes: [
        ...ratioNotes(samples),
        'Sluice "no limiter" is the gateway with an engine that allows without asking any store: the gateway has no switch to turn limiting off.',
        'Every limited target uses a rule so large nothing is refused: the figures are the cost of deciding, not of refusing.',
        `Load generator, gateways, upstream and Redis share the machine's ${availableParallelism()} cores: absolute figures are machine-bound, ratios between targets are the signal.`,
      ],
    };
  } finally {
    for (const child of children.reverse()) await child.stop();
    await redis.release();
  }
}

/** One run of one target: the load's result and the server's CPU µs per completed request. */
type Sample = { result: LoadResult; cpuUs: number };
type Samples = Map<string, Sample[]>;

/** The ratios with a target, each the median over repeats of the ratio within one repeat (the runs of a repeat are adjacent). */
function ratioNotes(samples: Samples): string[] {
  const runs = (target: string, mode: string) => samples.get(`${target}\u0000${mode}`) ?? [];
  const paired = (a: string, b: string, mode: string, of: (x: Sample, y: Sample) => number) => {
    const left = runs(a, mode);
    const right = runs(b, mode);
    const values = left.slice(0, right.length).map((x, i) => of(x, right[i]!));
    return values.length ? round(median(values), 3) : Number.NaN;
  };
  const rps = (a: string, b: string) => paired(a, b, 'saturation', (x, y) => x.result.requestsPerSec / y.result.requestsPerSec);
  return [
    `Sluice on Redis ÷ nginx plain proxy, requests/s at saturation: ${rps(SLUICE, NGINX_PLAIN)} (target ≥ 0.55)`,
    `Sluice on Redis ÷ Fastify + @fastify/rate-limit, requests/s at saturation: ${rps(SLUICE, FASTIFY)} by default, ${rps(EXACT, FASTIFY)} with one script call per request`,
    `the ceiling of both ratios above, Sluice without limiting ÷ the same peers: ${rps(NONE, NGINX_PLAIN)} of nginx plain proxy, ${rps(NONE, FASTIFY)} of Fastify + @fastify/rate-limit (the gateway's HTTP path alone, node's http server and undici, with an engine that asks no store)`,
    `cost of limiting on Redis, 1 − Sluice on Redis ÷ Sluice without limiting, at saturation: ${round(1 - rps(SLUICE, NONE), 3)} by default, ${round(1 - rps(EXACT, NONE), 3)} with one script call per request (target < 0.10)`,
    `added p99 at an even 2,500 req/s, Sluice on Redis − Sluice without limiting, median of per-repeat differences: ${paired(SLUICE, NONE, 'paced', (x, y) => x.result.p99Ms - y.result.p99Ms)} ms by default, ${paired(EXACT, NONE, 'paced', (x, y) => x.result.p99Ms - y.result.p99Ms)} ms with one script call per request (target < 0.5 ms); Fastify's added p99 over Sluice without limiting: ${paired(FASTIFY, NONE, 'paced', (x, y) => x.result.p99Ms - y.result.p99Ms)} ms`,
  ];
}

const showFigure = (f: Figure, digits = 0) => `${round(f.median, digits).toLocaleString('en-US')} (${round(f.min, digits).toLocaleString('en-US')}–${round(f.max, digits).toLocaleString('en-US')})`;

export function printGateway(result: GatewayResult): string {
  const table = textTable(
    ['target', 'load', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'non-2xx', 'errors'],
    result.rows.map((r) => [r.target, r.mode === 'paced' ? `paced ${PACED_RATE}/s` : 'saturation', showFigure(r.requestsPerSec), showFigure(r.p50Ms, 2), showFigure(r.p99Ms, 2), showFigure(r.cpuUsPerRequest), r.non2xx, r.errors]),
  );
  return [table, `medians (min–max) of ${result.repeats} run(s)`, ...result.skipped.map((s) => `skipped: ${s}`)].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const result = await runGatewayBench(parseOptions());
    console.log('\n' + printGateway(result));
  });
}
