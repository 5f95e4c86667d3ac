// npm run bench:gateway [-- --quick]
// Requests/s and p50/p99 on loopback for: the upstream alone, Sluice without
// limiting, with the memory store and with Redis, and the peers (Fastify,
// Express, and nginx / HAProxy when installed). Each at saturation (autocannon,
// 64 connections) and at an evenly paced 2,500 req/s. Targets are run in turn
// (A B C … A B C …), repeated; medians with ranges; CPU µs per request of the
// gateway process from /proc. Then the edge rows (gateway-edge.ts): HTTPS,
// HTTP/2 and two upstream instances, the rapid-reset row (gateway-rapid-reset.ts),
// the tracing rows (gateway-tracing.ts): off, 1 % and 100 % sampled, and the
// streamed path (gateway-stream.ts): a 10 MiB event stream, usage parsing off and on.
import { availableParallelism } from 'node:os';
import { type EdgeResult, printEdge, runEdgeBench } from './gateway-edge.js';
import { printRapidReset, type RapidResetRow, runRapidResetBench } from './gateway-rapid-reset.js';
import { printStream, runStreamBench, type StreamResult } from './gateway-stream.js';
import { printTracing, runTracingBench, type TracingResult } from './gateway-tracing.js';
import { type Child, forkServer } from './lib/children.js';
import { isMain, runMain } from './lib/cleanup.js';
import { type LoadResult, paced, saturate } from './lib/http-load.js';
import { type Figure, figure, showFigure } from './lib/figure.js';
import { median, round } from './lib/latency.js';
import { binaryExists, NGINX_PLAIN, startHaproxy, startNginx } from './lib/native-peers.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { LOAD_CORE, pin, pinningUnavailable, TARGET_CORE, unpin } from './lib/pinning.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';

export const PACED_RATE = 2500;

/** Target names the ratio notes look up (nginx's plain proxy: NGINX_PLAIN). */
const SLUICE = 'Sluice, Redis store';
const EXACT = 'Sluice, Redis store, one script call per request';
const NONE = 'Sluice, no limiter';
/** The floor of any Redis-backed limiter: no limiter, one bare Redis round trip (PING) per request. */
const PING = 'Sluice, no limiter, one Redis PING per request';
const FASTIFY = 'Fastify + http-proxy + rate-limit (Redis)';

export type { Figure } from './lib/figure.js';

type Mode = 'saturation' | 'paced' | 'paced-pinned' | 'paced-pinned-apart';
const MODES: readonly Mode[] = ['saturation', 'paced', 'paced-pinned', 'paced-pinned-apart'];

export interface GatewayRow {
  target: string;
  /**
   * `paced-pinned`: the paced load with the load generator and upstream on one
   * core, the target and Redis on the other; `paced-pinned-apart`: Redis moved
   * to the load generator's core, the target alone on its own.
   */
  mode: Mode;
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
  /** A second client's p99 before and during a rapid-reset attack. */
  rapidReset: RapidResetRow;
  repeats: number;
  skipped: string[];
  notes: string[];
  edge: EdgeResult;
  /** Tracing off, 1 % and 100 % sampled: CPU per request and p99. */
  tracing: TracingResult;
  /** A streamed answer: time to first byte and CPU per MB, usage parsing off and on, beside nginx. */
  stream: StreamResult;
}

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
      forkServer(PING, 'sluice.ts', { ...base, limiter: 'ping' }),
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
    const record = (target: Child, mode: Mode, result: LoadResult, cpuUs: number) => {
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
    const unpinnable = pinningUnavailable();
    if (unpinnable) skipped.push(unpinnable);
    else {
      const plan = { upstream, redisPid: redis.pid, targets: children.filter((c) => PINNED.includes(c.name)), repeats, durationMs, record, progress };
      await pinnedRuns(plan, 'paced-pinned', TARGET_CORE);
      await pinnedRuns(plan, 'paced-pinned-apart', LOAD_CORE);
    }

    const rows: GatewayRow[] = [];
    for (const target of children) {
      for (const mode of MODES) {
        const runs = samples.get(`${target.name}\u0000${mode}`) ?? [];
        if (runs.length === 0) continue;
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
    const edge = await runEdgeBench(options, base, progress);
    const rapidReset = await runRapidResetBench(options, progress);
    const tracing = await runTracingBench(options, upstream.url, progress);
    const stream = await runStreamBench(options, progress);
    return {
      rows,
      rapidReset,
      tracing,
      stream,
      repeats,
      skipped: [...skipped, ...edge.skipped, ...stream.skipped],
      edge,
      notes: [
        ...ratioNotes(samples),
        ...tracing.notes,
        ...stream.notes,
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

/** The targets of the pinned pass: the upstream, Sluice with and without limiting, nginx. */
const PINNED = ['upstream alone', NONE, PING, SLUICE, EXACT, NGINX_PLAIN];

interface PinnedPlan {
  upstream: Child;
  redisPid: number;
  targets: Child[];
  repeats: number;
  durationMs: number;
  record: (target: Child, mode: Mode, result: LoadResult, cpuUs: number) => void;
  progress: (line: string) => void;
}

/**
 * The paced load again, pinned (pinning.ts): this process (the load generator)
 * and the upstream on one core, the target on the other, Redis on
 * `redisCore`. The upstream-alone row keeps its core with the load generator.
 */
async function pinnedRuns(plan: PinnedPlan, mode: Mode, redisCore: string): Promise<void> {
  const { upstream, redisPid, targets, repeats, durationMs, record, progress } = plan;
  pin(process.pid, LOAD_CORE, true);
  pin(upstream.pid, LOAD_CORE);
  pin(redisPid, redisCore);
  try {
    for (let repeat = 1; repeat <= repeats; repeat++) {
      for (const target of targets) {
        progress(`gateway: ${MODE_LABELS[mode]} run ${repeat}/${repeats}, ${target.name}`);
        if (target !== upstream) pin(target.pid, TARGET_CORE);
        try {
          const cpu = target.cpuMicros();
          const steady = await paced(target.url, PACED_RATE, durationMs);
          record(target, mode, steady, target.cpuMicros() - cpu);
        } finally {
          if (target !== upstream) unpin(target.pid);
        }
      }
    }
  } finally {
    for (const pid of [redisPid, upstream.pid]) unpin(pid);
    unpin(process.pid, true);
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
  const cpu = (a: string, b: string, mode: Mode) => round(paired(a, b, mode, (x, y) => x.cpuUs / y.cpuUs) - 1, 3);
  const addedP99 = (a: string, b: string, mode: Mode) => paired(a, b, mode, (x, y) => x.result.p99Ms - y.result.p99Ms);
  const p99Ratio = (mode: Mode) => paired(NONE, NGINX_PLAIN, mode, (x, y) => x.result.p99Ms / y.result.p99Ms);
  return [
    `Sluice on Redis ÷ nginx plain proxy, requests/s at saturation: ${rps(SLUICE, NGINX_PLAIN)} (target ≥ 0.55)`,
    `Sluice on Redis ÷ Fastify + @fastify/rate-limit, requests/s at saturation: ${rps(SLUICE, FASTIFY)} by default, ${rps(EXACT, FASTIFY)} with one script call per request`,
    `the ceiling of both ratios above, Sluice without limiting ÷ the same peers: ${rps(NONE, NGINX_PLAIN)} of nginx plain proxy, ${rps(NONE, FASTIFY)} of Fastify + @fastify/rate-limit (the gateway's HTTP path alone, node's http server and undici, with an engine that asks no store)`,
    `cost of limiting on Redis in requests/s, 1 − Sluice on Redis ÷ Sluice without limiting, at saturation: ${round(1 - rps(SLUICE, NONE), 3)} by default, ${round(1 - rps(EXACT, NONE), 3)} with one script call per request (target < 0.10)`,
    `cost of limiting on Redis in CPU per request, Sluice on Redis ÷ Sluice without limiting − 1, with one script call per request: ${cpu(EXACT, NONE, 'saturation')} at saturation, ${cpu(EXACT, NONE, 'paced')} paced, ${cpu(EXACT, NONE, 'paced-pinned')} paced and pinned (${cpu(EXACT, NONE, 'paced-pinned-apart')} with Redis apart); by default ${cpu(SLUICE, NONE, 'saturation')}, ${cpu(SLUICE, NONE, 'paced')}, ${cpu(SLUICE, NONE, 'paced-pinned')} (${cpu(SLUICE, NONE, 'paced-pinned-apart')}) (target ≤ 0.10)`,
    `of that, one bare Redis round trip per request (${PING} ÷ ${NONE} − 1): ${cpu(PING, NONE, 'saturation')} at saturation, ${cpu(PING, NONE, 'paced')} paced, ${cpu(PING, NONE, 'paced-pinned')} paced and pinned (${cpu(PING, NONE, 'paced-pinned-apart')} with Redis apart); Sluice's decision above that floor (Sluice on Redis, one script call per request ÷ ${PING} − 1): ${cpu(EXACT, PING, 'saturation')}, ${cpu(EXACT, PING, 'paced')}, ${cpu(EXACT, PING, 'paced-pinned')} (${cpu(EXACT, PING, 'paced-pinned-apart')})`,
    `added p99 at an even 2,500 req/s, Sluice on Redis − Sluice without limiting, median of per-repeat differences: ${addedP99(SLUICE, NONE, 'paced')} ms by default, ${addedP99(EXACT, NONE, 'paced')} ms with one script call per request; pinned with Redis on the gateway's core ${addedP99(SLUICE, NONE, 'paced-pinned')} and ${addedP99(EXACT, NONE, 'paced-pinned')} ms (a bare PING per request: ${addedP99(PING, NONE, 'paced-pinned')} ms), pinned with Redis apart ${addedP99(SLUICE, NONE, 'paced-pinned-apart')} and ${addedP99(EXACT, NONE, 'paced-pinned-apart')} ms (target ≤ 2 ms); Fastify's added p99 over Sluice without limiting: ${addedP99(FASTIFY, NONE, 'paced')} ms`,
    `p99 at an even 2,500 req/s, Sluice without limiting ÷ nginx plain proxy: ${p99Ratio('paced')} unpinned, ${p99Ratio('paced-pinned')} pinned, ${p99Ratio('paced-pinned-apart')} pinned with Redis apart (target ≤ 3)`,
  ];
}

export const MODE_LABELS: Record<Mode, string> = { saturation: 'saturation', paced: `paced ${PACED_RATE}/s`, 'paced-pinned': `paced ${PACED_RATE}/s, pinned`, 'paced-pinned-apart': `paced ${PACED_RATE}/s, pinned, Redis apart` };

export function printGateway(result: GatewayResult): string {
  const table = textTable(
    ['target', 'load', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', 'non-2xx', 'errors'],
    result.rows.map((r) => [r.target, MODE_LABELS[r.mode], showFigure(r.requestsPerSec), showFigure(r.p50Ms, 2), showFigure(r.p99Ms, 2), showFigure(r.cpuUsPerRequest), r.non2xx, r.errors]),
  );
  return [table, `medians (min–max) of ${result.repeats} run(s)`, ...result.skipped.map((s) => `skipped: ${s}`), '', printEdge(result.edge), '', ...result.edge.notes, '', printRapidReset(result.rapidReset), '', printTracing(result.tracing), '', printStream(result.stream)].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const result = await runGatewayBench(parseOptions());
    console.log(['', printGateway(result), '', ...result.notes].join('\n'));
  });
}
