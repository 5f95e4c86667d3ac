// The gateway at the edge, part of `npm run bench:gateway` (alone: tsx
// bench/gateway-edge.ts [--quick]): Sluice, nginx and the Fastify peer over
// plain HTTP/1.1, HTTPS with HTTP/1.1 and HTTPS with HTTP/2, and Sluice
// balancing over two upstream instances. Saturation by h2load for every
// protocol (one generator, so the protocols compare), paced 2,500 req/s by an
// undici pool (TLS; HTTP/2 by ALPN) for p99; CPU µs per request from /proc.
// Targets run in turn, repeated; medians.
import { existsSync, readFileSync } from 'node:fs';
import { type Child, forkServer } from './lib/children.js';
import { isMain, onCleanup, runMain } from './lib/cleanup.js';
import { type Figure, figure, showFigure } from './lib/figure.js';
import { H2LOAD, h2loadSaturate } from './lib/h2load.js';
import { type LoadResult, paced } from './lib/http-load.js';
import { median, round } from './lib/latency.js';
import { binaryExists, startNginx } from './lib/native-peers.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';
import { makeCertificates } from '../test/helpers/tls-certs.js';

const PACED_RATE = 2500;
const KEY = 'bench-tenant-0';
export const EDGE_SLUICE = 'Sluice, Redis store, one script call per request';
const TWO = `${EDGE_SLUICE}, two upstream instances`;
const NGINX = 'nginx limit_req';
const FASTIFY = 'Fastify + http-proxy + rate-limit (Redis)';

export type EdgeProtocol = 'HTTP/1.1' | 'HTTPS, HTTP/1.1' | 'HTTPS, HTTP/2';
const PROTOCOLS: readonly EdgeProtocol[] = ['HTTP/1.1', 'HTTPS, HTTP/1.1', 'HTTPS, HTTP/2'];

export interface EdgeRow {
  target: string;
  protocol: EdgeProtocol;
  /** At saturation (h2load, 64 connections, one request at a time on each). */
  requestsPerSec: Figure;
  cpuUsPerRequest: Figure;
  /** At an even 2,500 req/s. */
  pacedP99Ms: Figure;
  pacedCpuUsPerRequest: Figure;
  non2xx: number;
  errors: number;
}

export interface EdgeResult {
  rows: EdgeRow[];
  repeats: number;
  skipped: string[];
  notes: string[];
}

/** One target over one protocol: the process, and the URL that protocol is asked on. */
interface Run {
  name: string;
  protocol: EdgeProtocol;
  child: Child;
  url: string;
}

interface Sample {
  saturated: LoadResult;
  cpuUs: number;
  paced: LoadResult;
  pacedCpuUs: number;
}

const key = (name: string, protocol: EdgeProtocol) => `${name}\u0000${protocol}`;

/** Starts the edge targets in front of `upstream` (and a second instance of it for the two-instance row). */
async function startTargets(upstream: string, redisUrl: string, skipped: string[]): Promise<{ runs: Run[]; children: Child[]; ca: Buffer }> {
  const certs = makeCertificates();
  onCleanup(() => certs.remove());
  const tls = { cert: certs.serverCert, key: certs.serverKey };
  const second = await forkServer('second upstream instance', 'upstream.ts', {});
  const sluice = { upstream, redisUrl, limiter: 'redis', exact: true };
  const [sluicePlain, sluiceTls, two, fastifyPlain, fastifyTls] = await Promise.all([
    forkServer(EDGE_SLUICE, 'sluice.ts', sluice),
    forkServer(EDGE_SLUICE, 'sluice.ts', { ...sluice, tls }),
    forkServer(TWO, 'sluice.ts', { ...sluice, upstream: [upstream, second.url] }),
    forkServer(FASTIFY, 'fastify-peer.ts', { upstream, redisUrl }),
    forkServer(FASTIFY, 'fastify-peer.ts', { upstream, redisUrl, tls }),
  ]);
  const children = [second, sluicePlain, sluiceTls, two, fastifyPlain, fastifyTls];
  const both = (name: string, plain: Child, secure: Child): Run[] => [
    { name, protocol: 'HTTP/1.1', child: plain, url: plain.url },
    ...(['HTTPS, HTTP/1.1', 'HTTPS, HTTP/2'] as const).map((protocol) => ({ name, protocol, child: secure, url: secure.url })),
  ];
  const runs = [...both(EDGE_SLUICE, sluicePlain, sluiceTls), { name: TWO, protocol: 'HTTP/1.1' as const, child: two, url: two.url }, ...both(FASTIFY, fastifyPlain, fastifyTls)];
  if (binaryExists('nginx')) {
    const [plain, secure] = [await startNginx(upstream), await startNginx(upstream, true, { ...tls, name: NGINX })];
    children.push(plain, secure);
    runs.push(...both(NGINX, plain, secure));
  } else skipped.push('nginx over HTTPS and HTTP/2: no nginx binary');
  return { runs, children, ca: readFileSync(certs.ca) };
}

async function measure(run: Run, durationMs: number, ca: Buffer): Promise<Sample> {
  const h2 = run.protocol === 'HTTPS, HTTP/2';
  let cpu = run.child.cpuMicros();
  const saturated = await h2loadSaturate(run.url, h2 ? 'h2' : 'h1', durationMs, KEY);
  const cpuUs = (run.child.cpuMicros() - cpu) / saturated.completed;
  cpu = run.child.cpuMicros();
  const steady = await paced(run.url, PACED_RATE, durationMs, run.url.startsWith('https:') ? { allowH2: h2, connect: { ca } } : {});
  return { saturated, cpuUs, paced: steady, pacedCpuUs: (run.child.cpuMicros() - cpu) / steady.completed };
}

export async function runEdgeBench(options: BenchOptions, base: { upstream: string; redisUrl: string }, progress: (line: string) => void = console.log): Promise<EdgeResult> {
  const repeats = pick(options, 1, 5);
  const durationMs = pick(options, 1000, 5000);
  const skipped: string[] = [];
  if (!existsSync(H2LOAD)) return { rows: [], repeats, skipped: ['edge rows (HTTPS, HTTP/2, two upstream instances): no h2load (apt-get install nghttp2-client)'], notes: [] };
  progress('gateway edge: starting TLS and HTTP/2 targets, a second upstream instance');
  const { runs, children, ca } = await startTargets(base.upstream, base.redisUrl, skipped);
  try {
    const samples = new Map<string, Sample[]>();
    for (const run of runs) await h2loadSaturate(run.url, run.protocol === 'HTTPS, HTTP/2' ? 'h2' : 'h1', pick(options, 1000, 1000), KEY); // warm-up
    for (let repeat = 1; repeat <= repeats; repeat++) {
      for (const run of runs) {
        progress(`gateway edge: run ${repeat}/${repeats}, ${run.name}, ${run.protocol}`);
        const k = key(run.name, run.protocol);
        samples.set(k, [...(samples.get(k) ?? []), await measure(run, durationMs, ca)]);
      }
    }
    return { rows: runs.map((run) => rowOf(run, samples.get(key(run.name, run.protocol))!)), repeats, skipped, notes: edgeNotes(samples) };
  } finally {
    for (const child of children.reverse()) await child.stop();
  }
}

function rowOf(run: Run, runs: Sample[]): EdgeRow {
  return {
    target: run.name,
    protocol: run.protocol,
    requestsPerSec: figure(runs.map((r) => r.saturated.requestsPerSec)),
    cpuUsPerRequest: figure(runs.map((r) => r.cpuUs)),
    pacedP99Ms: figure(runs.map((r) => r.paced.p99Ms)),
    pacedCpuUsPerRequest: figure(runs.map((r) => r.pacedCpuUs)),
    non2xx: runs.reduce((sum, r) => sum + r.saturated.non2xx + r.paced.non2xx, 0),
    errors: runs.reduce((sum, r) => sum + r.saturated.errors + r.paced.errors, 0),
  };
}

/** What TLS and HTTP/2 cost each target, and what a second instance changes: medians of per-repeat ratios (the runs of a repeat are adjacent). */
function edgeNotes(samples: Map<string, Sample[]>): string[] {
  const paired = (a: [string, EdgeProtocol], b: [string, EdgeProtocol], of: (x: Sample, y: Sample) => number) => {
    const left = samples.get(key(...a)) ?? [];
    const right = samples.get(key(...b)) ?? [];
    const values = left.slice(0, right.length).map((x, i) => of(x, right[i]!));
    return values.length ? round(median(values), 3) : Number.NaN;
  };
  const rps = (x: Sample, y: Sample) => x.saturated.requestsPerSec / y.saturated.requestsPerSec;
  const cpu = (x: Sample, y: Sample) => round(x.cpuUs / y.cpuUs - 1, 3);
  const p99 = (x: Sample, y: Sample) => round(x.paced.p99Ms - y.paced.p99Ms, 3);
  const cost = (name: string) =>
    `${name}: TLS (HTTPS, HTTP/1.1 ÷ HTTP/1.1) ${paired([name, 'HTTPS, HTTP/1.1'], [name, 'HTTP/1.1'], rps)}× the req/s, ${paired([name, 'HTTPS, HTTP/1.1'], [name, 'HTTP/1.1'], cpu)} more CPU per request, ${paired([name, 'HTTPS, HTTP/1.1'], [name, 'HTTP/1.1'], p99)} ms added p99 paced; HTTP/2 over TLS ÷ HTTPS HTTP/1.1: ${paired([name, 'HTTPS, HTTP/2'], [name, 'HTTPS, HTTP/1.1'], rps)}× the req/s, ${paired([name, 'HTTPS, HTTP/2'], [name, 'HTTPS, HTTP/1.1'], cpu)} CPU per request, ${paired([name, 'HTTPS, HTTP/2'], [name, 'HTTPS, HTTP/1.1'], p99)} ms p99 paced`;
  const peer = (other: string) => PROTOCOLS.map((protocol) => `${paired([EDGE_SLUICE, protocol], [other, protocol], rps)} over ${protocol}`).join(', ');
  return [
    ...[EDGE_SLUICE, NGINX, FASTIFY].map(cost),
    `Sluice ÷ nginx limit_req, req/s at saturation: ${peer(NGINX)}; Sluice ÷ Fastify + @fastify/rate-limit: ${peer(FASTIFY)}`,
    `two upstream instances ÷ one (Sluice, HTTP/1.1): ${paired([TWO, 'HTTP/1.1'], [EDGE_SLUICE, 'HTTP/1.1'], rps)}× the req/s, ${paired([TWO, 'HTTP/1.1'], [EDGE_SLUICE, 'HTTP/1.1'], cpu)} CPU per request (both instances share the machine: the row measures the balancing's cost, not added capacity)`,
    'Edge rows: one tenant key, Sluice with one Redis script call per request (no hot-key leasing), like the peers; each run opens its 64 connections once (64 TLS handshakes in a 5 s window), so the TLS figures are mostly record encryption, not handshakes; the generators (h2load, and the bench process for the paced runs) share the 2 cores with the targets.',
  ];
}

export const EDGE_HEADER = ['target', 'protocol', 'req/s', 'CPU µs/req', `p99 ms paced ${PACED_RATE}/s`, 'CPU µs/req paced', 'non-2xx', 'errors'];
export const edgeCells = (r: EdgeRow, fig: (f: Figure, digits?: number) => string = showFigure) => [r.target, r.protocol, fig(r.requestsPerSec), fig(r.cpuUsPerRequest), fig(r.pacedP99Ms, 2), fig(r.pacedCpuUsPerRequest), r.non2xx, r.errors];

export function printEdge(result: EdgeResult): string {
  return [textTable(EDGE_HEADER, result.rows.map((r) => edgeCells(r))), `medians (min–max) of ${result.repeats} run(s)`, ...result.skipped.map((s) => `skipped: ${s}`)].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const redis = await benchRedis();
    try {
      const upstream = await forkServer('upstream alone', 'upstream.ts', {});
      const result = await runEdgeBench(parseOptions(), { upstream: upstream.url, redisUrl: redis.url });
      await upstream.stop();
      console.log(['', printEdge(result), '', ...result.notes].join('\n'));
    } finally {
      await redis.release();
    }
  });
}
