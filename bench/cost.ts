// npm run bench:cost [-- --quick] [-- --profile]
// The paced cost of limiting, with less noise than one long run: Sluice
// without limiting, with one bare Redis PING per request (the floor of any
// Redis-backed limiter), and on Redis with one script call per request, each
// at an even 2,500 req/s for a few seconds, in turn (A B C A B C …), many
// times. CPU µs per request of each gateway process from /proc; the ratios
// are medians of per-round ratios. `--profile` then runs each once more under
// --cpu-prof and says where its time goes.
import { type Child, forkServer } from './lib/children.js';
import { isMain, runMain } from './lib/cleanup.js';
import { type ProfileShare, profiledRun } from './lib/cpu-profile.js';
import { paced } from './lib/http-load.js';
import { median, round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';
import { PACED_RATE } from './gateway.js';

const TARGETS = [
  { name: 'no limiter', args: { limiter: 'none' } },
  { name: 'no limiter, one Redis PING per request', args: { limiter: 'ping' } },
  { name: 'Redis, one script call per request', args: { limiter: 'redis', exact: true } },
] as const;

export interface CostResult {
  rounds: number;
  /** Median CPU µs per request of each target, in TARGETS order. */
  cpuUs: number[];
  /** Median per-round ratio − 1 of: the floor over no limiter, Redis over the floor, Redis over no limiter. */
  floor: number;
  aboveFloor: number;
  total: number;
  profiles: { target: string; cpuUs: number; shares: ProfileShare[] }[];
}

export async function runCostBench(options: BenchOptions, profile: boolean, progress: (line: string) => void = console.log): Promise<CostResult> {
  const rounds = pick(options, 2, 15);
  const durationMs = pick(options, 400, 3000);
  const redis = await benchRedis();
  const upstream = await forkServer('upstream', 'upstream.ts', {});
  const children: Child[] = [];
  try {
    const base = { upstream: upstream.url, redisUrl: redis.url };
    children.push(...(await Promise.all(TARGETS.map((t) => forkServer(t.name, 'sluice.ts', { ...base, ...t.args })))));
    for (const child of children) await paced(child.url, PACED_RATE, pick(options, 200, 2000)); // warm-up
    const perRound: number[][] = [];
    for (let round = 1; round <= rounds; round++) {
      progress(`cost: round ${round}/${rounds}`);
      const cpu: number[] = [];
      for (const child of children) cpu.push(await cpuPerRequest(child, durationMs));
      perRound.push(cpu);
    }
    const ratio = (a: number, b: number) => round(median(perRound.map((r) => r[a]! / r[b]!)) - 1, 3);
    const profiles = profile ? await profileEach(base, durationMs, progress) : [];
    return {
      rounds,
      cpuUs: TARGETS.map((_, i) => round(median(perRound.map((r) => r[i]!)), 1)),
      floor: ratio(1, 0),
      aboveFloor: ratio(2, 1),
      total: ratio(2, 0),
      profiles,
    };
  } finally {
    for (const child of [...children, upstream]) await child.stop();
    await redis.release();
  }
}

async function cpuPerRequest(child: Child, durationMs: number): Promise<number> {
  const before = child.cpuMicros();
  const result = await paced(child.url, PACED_RATE, durationMs);
  return (child.cpuMicros() - before) / Math.max(1, result.completed);
}

/** Each target once more, fresh, under --cpu-prof: where its time goes during the load. */
async function profileEach(base: object, durationMs: number, progress: (line: string) => void): Promise<CostResult['profiles']> {
  const out: CostResult['profiles'] = [];
  for (const target of TARGETS) {
    progress(`cost: profiling ${target.name}`);
    const { result: cpuUs, shares } = await profiledRun(target.name, 'sluice.ts', { ...base, ...target.args }, (child) => cpuPerRequest(child, durationMs));
    out.push({ target: target.name, cpuUs: round(cpuUs, 1), shares });
  }
  return out;
}

export function printCost(result: CostResult): string {
  const table = textTable(['Sluice', `CPU µs/request, paced ${PACED_RATE}/s`], TARGETS.map((t, i) => [t.name, result.cpuUs[i]]));
  const pct = (x: number) => `${round(x * 100, 1)} %`;
  const notes = [
    `medians of ${result.rounds} rounds; ratios are medians of per-round ratios`,
    `the floor (one bare PING per request) over no limiter: +${pct(result.floor)}`,
    `Sluice's decision on Redis over the floor: +${pct(result.aboveFloor)}`,
    `the cost of limiting (one script call per request over no limiter): +${pct(result.total)} (target ≤ 10 %)`,
  ];
  const profiles = result.profiles.map((p) => `${p.target} (${p.cpuUs} µs/request under the profiler): ${p.shares.map((s) => `${s.where} ${s.percent} %`).join(', ')}`);
  return [table, ...notes, ...(profiles.length ? ['', 'where the time goes (share of non-idle CPU, --cpu-prof):', ...profiles] : [])].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const argv = process.argv.slice(2);
    const result = await runCostBench(parseOptions(argv.filter((a) => a !== '--profile')), argv.includes('--profile'));
    console.log(`\n${printCost(result)}`);
  });
}
