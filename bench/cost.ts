// npm run bench:cost [-- --quick] [-- --profile] [-- --perf]
// The cost of a decision against what a user compares, with less noise than
// one long run: Sluice without limiting, with one bare Redis PING per request
// (the floor of any Redis-backed limiter), with one bare EVALSHA of its
// token-bucket script per request (the script's round trip without Sluice's
// code around it: the decision above PING split into Redis's part and
// Sluice's), on Redis by default and with one script call per request, and
// the Fastify + @fastify/rate-limit peer on the same Redis, with the peer's
// proxy alone beside it (what limiting adds to each proxy, in µs, is the
// decision's cost apart from its HTTP path). Each round
// runs every target in turn, first at saturation, then at an even 2,500 req/s,
// in the listed order one round and the reverse the next (A B C, C B A, …): a
// target's place in the round (what ran just before it) must not bias a ratio.
// Every round forks its servers afresh and warms them up: two processes of the
// same code read 0.88x each other over 8 rounds here (one lower in 7, level in
// the 8th), another pair 1.24x over 6 (a process keeps its speed for life: its
// JIT's choices, its memory layout), so a ratio must span many processes.
// CPU µs per request of each server process from /proc. Every ratio is the
// median of per-round ratios (the runs of a round are adjacent). A second copy
// of the Fastify peer runs in every round too: the peer ÷ its twin is what the
// same code reads against itself in this run (its spread across rounds is the
// noise a ratio above carries; on this 2-core machine identical servers have
// read 8-15 % apart in 5 rounds).
// `--profile` then runs each Sluice target once more under --cpu-prof and says
// where its time goes; `--perf` runs the bare script call and the one script
// call per request once more under Linux perf and says, function by function,
// what Sluice's code around the call costs (perf-profile.ts).
import { type Child, forkServer } from './lib/children.js';
import { isMain, runMain } from './lib/cleanup.js';
import { type ProfileShare, profiledRun } from './lib/cpu-profile.js';
import { type LoadResult, paced, saturate } from './lib/http-load.js';
import { perfAvailable, type PerfRun, perfRun, printPerfSplit } from './lib/perf-profile.js';
import { median, round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';
import { PACED_RATE } from './gateway.js';

const TARGETS = [
  { name: 'Sluice, no limiter', file: 'sluice.ts', args: { limiter: 'none' } },
  { name: 'Sluice, no limiter, one Redis PING per request', file: 'sluice.ts', args: { limiter: 'ping' } },
  { name: 'Sluice, no limiter, one bare EVALSHA of its script per request', file: 'sluice.ts', args: { limiter: 'script' } },
  { name: 'Sluice, Redis (default)', file: 'sluice.ts', args: { limiter: 'redis' } },
  { name: 'Sluice, Redis, one script call per request', file: 'sluice.ts', args: { limiter: 'redis', exact: true } },
  { name: 'Fastify + @fastify/rate-limit (Redis)', file: 'fastify-peer.ts', args: {} },
  { name: 'the same Fastify peer, a second copy (noise)', file: 'fastify-peer.ts', args: {} },
  { name: 'Fastify + @fastify/http-proxy, no limiting', file: 'fastify-peer.ts', args: { limit: false } },
] as const;
const [NONE, PING, SCRIPT, SLUICE, EXACT, FASTIFY, TWIN, FASTIFY_BARE] = [0, 1, 2, 3, 4, 5, 6, 7] as const;

type Load = 'saturation' | 'paced';
const LOADS: readonly Load[] = ['saturation', 'paced'];

/** One run of one target: requests/s, p99 and the server's CPU µs per completed request. */
interface Run {
  rps: number;
  p99Ms: number;
  cpuUs: number;
}

/** rounds[r][load][target] */
type Rounds = Record<Load, Run[]>[];

export interface CostRow {
  target: string;
  load: Load;
  rps: number;
  p99Ms: number;
  cpuUs: number;
}

export interface CostResult {
  rounds: number;
  rows: CostRow[];
  /** The issue's targets, each a median of per-round ratios, with its bound. */
  ratios: { what: string; value: number; target: string; met: boolean }[];
  /** The Fastify peer ÷ its twin per load: the median and the range of the per-round ratios (the run's noise). */
  noise: { load: Load; cpu: Spread; rps: Spread }[];
  profiles: { target: string; cpuUs: number; shares: ProfileShare[] }[];
  /** Under perf (`--perf`), paced: the bare script call and the one script call per request. */
  perf: PerfRun[];
}

/** `profile`: each Sluice target under --cpu-prof; `perf`: the script-call split under Linux perf. */
export interface CostExtras {
  profile: boolean;
  perf: boolean;
}

export async function runCostBench(options: BenchOptions, extras: CostExtras, progress: (line: string) => void = console.log): Promise<CostResult> {
  // Said before the rounds, not after them.
  if (extras.perf && !perfAvailable()) throw new Error('--perf needs Linux perf (Debian: apt-get install linux-perf)');
  const rounds = pick(options, 2, 9);
  const durationMs = pick(options, 400, 3000);
  const redis = await benchRedis();
  const upstream = await forkServer('upstream', 'upstream.ts', {});
  let children: Child[] = [];
  try {
    const base = { upstream: upstream.url, redisUrl: redis.url };
    const perRound: Rounds = [];
    for (let r = 1; r <= rounds; r++) {
      progress(`cost: round ${r}/${rounds}`);
      // Fresh processes every round (see the top): a process's own speed must not weigh on every round.
      children = await Promise.all(TARGETS.map((t) => forkServer(t.name, t.file, { ...base, ...t.args })));
      for (const child of children) await saturate(child.url, pick(options, 200, 1500)); // warm-up: JIT, pools
      const runs: Record<Load, Run[]> = { saturation: [], paced: [] };
      for (const load of LOADS) for (const i of orderOf(r, children.length)) runs[load][i] = await measure(children[i]!, load, durationMs);
      perRound.push(runs);
      await Promise.all(children.map((child) => child.stop()));
      children = [];
    }
    const profiles = extras.profile ? await profileEach(base, durationMs, progress) : [];
    const perf = extras.perf ? await perfEach(base, durationMs, progress) : [];
    return { rounds, rows: rowsOf(perRound), ratios: ratiosOf(perRound), noise: noiseOf(perRound), profiles, perf };
  } finally {
    for (const child of [...children, upstream]) await child.stop();
    await redis.release();
  }
}

/** The targets' indexes in the order round `r` (from 1) runs them: listed, then reversed, alternately. */
function orderOf(r: number, count: number): number[] {
  const listed = Array.from({ length: count }, (_, i) => i);
  return r % 2 === 1 ? listed : listed.reverse();
}

async function measure(child: Child, load: Load, durationMs: number): Promise<Run> {
  const before = child.cpuMicros();
  const result: LoadResult = load === 'saturation' ? await saturate(child.url, durationMs) : await paced(child.url, PACED_RATE, durationMs);
  return { rps: result.requestsPerSec, p99Ms: result.p99Ms, cpuUs: (child.cpuMicros() - before) / Math.max(1, result.completed) };
}

function rowsOf(perRound: Rounds): CostRow[] {
  return LOADS.flatMap((load) =>
    TARGETS.map((t, i) => ({
      target: t.name,
      load,
      rps: round(median(perRound.map((r) => r[load][i]!.rps)), 0),
      p99Ms: round(median(perRound.map((r) => r[load][i]!.p99Ms)), 2),
      cpuUs: round(median(perRound.map((r) => r[load][i]!.cpuUs)), 1),
    })),
  );
}

function ratiosOf(perRound: Rounds): CostResult['ratios'] {
  const per = (load: Load, of: (runs: Run[]) => number) => round(median(perRound.map((r) => of(r[load]))), 3);
  const cpu = (a: number, b: number, load: Load) => per(load, (runs) => runs[a]!.cpuUs / runs[b]!.cpuUs);
  const rps = (a: number, b: number) => per('saturation', (runs) => runs[a]!.rps / runs[b]!.rps);
  const p99 = (a: number, b: number) => per('paced', (runs) => runs[a]!.p99Ms - runs[b]!.p99Ms);
  const out: CostResult['ratios'] = [];
  const add = (what: string, value: number, target: string, met: boolean) => out.push({ what, value, target, met });
  for (const [label, row] of [['by default', SLUICE], ['one script call per request', EXACT]] as const) {
    for (const load of LOADS) add(`CPU per request ÷ Fastify peer, ${label}, ${load}`, cpu(row, FASTIFY, load), '≤ 0.9', cpu(row, FASTIFY, load) <= 0.9);
    add(`requests/s ÷ Fastify peer, ${label}, saturation`, rps(row, FASTIFY), '≥ 1.1', rps(row, FASTIFY) >= 1.1);
    add(`added p99 over no limiter (ms), ${label}, paced`, p99(row, NONE), '≤ 2', p99(row, NONE) <= 2);
  }
  for (const load of LOADS) {
    const above = round(cpu(EXACT, PING, load) - 1, 3);
    add(`decision above the PING floor (one script call ÷ PING − 1), ${load}`, above, '≤ 0.10', above <= 0.1);
  }
  for (const load of LOADS) add(`the PING floor over no limiter (PING ÷ none − 1), ${load}`, round(cpu(PING, NONE, load) - 1, 3), '(context)', true);
  // The decision above PING in two parts: Redis's (the script's round trip, no Sluice code) and Sluice's code around it.
  for (const load of LOADS) add(`the bare script call above PING (bare EVALSHA ÷ PING − 1), ${load}`, round(cpu(SCRIPT, PING, load) - 1, 3), '(context)', true);
  // Paced, the issue's bound on Sluice's own code around the call: at most 5 % of a request.
  for (const load of LOADS) {
    const own = round(cpu(EXACT, SCRIPT, load) - 1, 3);
    if (load === 'paced') add(`Sluice's code above the bare script call (one script call ÷ bare EVALSHA − 1), ${load}`, own, '≤ 0.05', own <= 0.05);
    else add(`Sluice's code above the bare script call (one script call ÷ bare EVALSHA − 1), ${load}`, own, '(context)', true);
  }
  // What limiting adds to each proxy, in µs: the decision's cost apart from the HTTP path it rides on.
  const added = (a: number, b: number, load: Load) => round(per(load, (runs) => runs[a]!.cpuUs - runs[b]!.cpuUs), 1);
  for (const load of LOADS) {
    add(`CPU µs limiting adds per request, Sluice one script call (− Sluice no limiter), ${load}`, added(EXACT, NONE, load), '(context)', true);
    add(`CPU µs limiting adds per request, Fastify (− Fastify no limiting), ${load}`, added(FASTIFY, FASTIFY_BARE, load), '(context)', true);
  }
  add('Sluice without limiting ÷ Fastify without limiting, CPU per request, saturation', cpu(NONE, FASTIFY_BARE, 'saturation'), '(context)', true);
  add('Sluice without limiting ÷ Fastify without limiting, CPU per request, paced', cpu(NONE, FASTIFY_BARE, 'paced'), '(context)', true);
  add('Sluice without limiting ÷ Fastify peer, requests/s at saturation (the ceiling)', rps(NONE, FASTIFY), '(context)', true);
  return out;
}

interface Spread {
  median: number;
  min: number;
  max: number;
}

/** What the same server reads against itself, round by round. */
function noiseOf(perRound: Rounds): CostResult['noise'] {
  const spread = (values: number[]): Spread => ({ median: round(median(values), 3), min: round(Math.min(...values), 3), max: round(Math.max(...values), 3) });
  return LOADS.map((load) => ({
    load,
    cpu: spread(perRound.map((r) => r[load][FASTIFY]!.cpuUs / r[load][TWIN]!.cpuUs)),
    rps: spread(perRound.map((r) => r[load][FASTIFY]!.rps / r[load][TWIN]!.rps)),
  }));
}

/** Each Sluice target once more, fresh, under --cpu-prof: where its time goes during the paced load. */
async function profileEach(base: object, durationMs: number, progress: (line: string) => void): Promise<CostResult['profiles']> {
  const out: CostResult['profiles'] = [];
  for (const target of TARGETS.filter((t) => t.file === 'sluice.ts')) {
    progress(`cost: profiling ${target.name}`);
    const { result: run, shares } = await profiledRun(target.name, target.file, { ...base, ...target.args }, (child) => measure(child, 'paced', durationMs));
    out.push({ target: target.name, cpuUs: round(run.cpuUs, 1), shares });
  }
  return out;
}

/** The bare script call and Sluice's one script call, fresh, under perf during the paced load. */
async function perfEach(base: object, durationMs: number, progress: (line: string) => void): Promise<CostResult['perf']> {
  const out: CostResult['perf'] = [];
  for (const target of [TARGETS[SCRIPT], TARGETS[EXACT]]) {
    progress(`cost: ${target.name} under perf`);
    const { costs } = await perfRun(target.name, target.file, { ...base, ...target.args }, (child) => paced(child.url, PACED_RATE, durationMs));
    out.push({ target: target.name, costs });
  }
  return out;
}

export function printCost(result: CostResult): string {
  const table = textTable(
    ['target', 'load', 'req/s', 'p99 ms', 'CPU µs/request'],
    result.rows.map((r) => [r.target, r.load === 'paced' ? `paced ${PACED_RATE}/s` : r.load, r.rps, r.p99Ms, r.cpuUs]),
  );
  const ratios = result.ratios.map((r) => `${r.what}: ${r.value}${r.target.startsWith('(') ? '' : ` (target ${r.target}: ${r.met ? 'met' : 'missed'})`}`);
  const noise = result.noise.map(
    (n) => `noise: the Fastify peer ÷ its second copy, ${n.load}: CPU per request ${n.cpu.median} (rounds ${n.cpu.min}–${n.cpu.max})${n.load === 'saturation' ? `, requests/s ${n.rps.median} (rounds ${n.rps.min}–${n.rps.max})` : ''}`,
  );
  const profiles = result.profiles.map((p) => `${p.target} (${p.cpuUs} µs/request under the profiler): ${p.shares.map((s) => `${s.where} ${s.percent} %`).join(', ')}`);
  return [
    table,
    `medians of ${result.rounds} rounds; every ratio is the median of per-round ratios`,
    ...ratios,
    ...noise,
    ...(profiles.length ? ['', 'where the time goes (share of non-idle CPU, --cpu-prof):', ...profiles] : []),
    ...printPerfSplit(result.perf),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const argv = process.argv.slice(2);
    const extras = { profile: argv.includes('--profile'), perf: argv.includes('--perf') };
    const result = await runCostBench(parseOptions(argv.filter((a) => a !== '--profile' && a !== '--perf')), extras);
    console.log(`\n${printCost(result)}`);
  });
}
