// npm run bench:own [-- --quick]
// One figure of bench:cost, measured closely: the CPU Sluice's own code adds
// around the bare script call, paced at 2,500 req/s (the target: at most 5 %
// of a request). bench:cost reads it once per round among eight servers, and
// its nine rounds leave it within a few points: identical servers paced read
// several percent apart round by round (a process keeps its speed for life,
// and where the scheduler puts it on a 2-core machine moves every run). Here
// only four servers run, for many rounds: the bare EVALSHA server, a second
// copy of it, Sluice's Redis store alone in place of the bare call, and
// Sluice with one script call per request, each forked afresh every round,
// warmed up, then paced twice, in a palindrome (A B C D D C B A, listed one
// round and reversed the next), its two runs averaged. Per round, Sluice's
// own code is Sluice ÷ bare − 1, split into the store's part (store ÷ bare −
// 1) and the engine's around it (Sluice ÷ store − 1); the bare server ÷ its
// copy − 1 is what the same measure reads for code that adds nothing: the
// noise. Each is given as the median over the rounds,
// with the interval that holds the true median with 90 % confidence (order
// statistics: it assumes nothing of the spread), so a change of a point or
// two can be told from the noise, or said to be inside it.
import { type Child, forkServer } from './lib/children.js';
import { isMain, runMain } from './lib/cleanup.js';
import { paced, saturate } from './lib/http-load.js';
import { median, round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';
import { PACED_RATE } from './gateway.js';

const TARGETS = [
  { name: 'Sluice, no limiter, one bare EVALSHA of its script per request', args: { limiter: 'script' } },
  { name: 'the same bare-script server, a second copy (noise)', args: { limiter: 'script' } },
  { name: "Sluice's Redis store alone in place of the bare EVALSHA, no engine around it", args: { limiter: 'store' } },
  { name: 'Sluice, Redis, one script call per request', args: { limiter: 'redis', exact: true } },
] as const;
const [BARE, TWIN, STORE, SLUICE] = [0, 1, 2, 3] as const;

/** A ratio over the rounds: its median, the 90 % confidence interval of that median (none from too few rounds), and the middle half of the rounds. */
export interface Spread {
  median: number;
  interval: [low: number, high: number] | undefined;
  quartiles: [number, number];
}

export interface OwnCodeResult {
  rounds: number;
  /** Median CPU µs per paced request of each target, in TARGETS' order. */
  cpuUs: number[];
  /** Sluice ÷ the bare script call − 1, per round. */
  own: Spread;
  /** Its part in the store: the store alone ÷ the bare script call − 1, per round. */
  store: Spread;
  /** Its part in the engine: Sluice ÷ the store alone − 1, per round. */
  engine: Spread;
  /** The bare script call ÷ its second copy − 1, per round: what code adding nothing reads. */
  noise: Spread;
}

export async function runOwnCodeBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<OwnCodeResult> {
  const rounds = pick(options, 5, 30);
  const durationMs = pick(options, 400, 2000);
  const redis = await benchRedis();
  const upstream = await forkServer('upstream', 'upstream.ts', {});
  let children: Child[] = [];
  try {
    const base = { upstream: upstream.url, redisUrl: redis.url };
    const cpu: number[][] = TARGETS.map(() => []);
    for (let r = 1; r <= rounds; r++) {
      progress(`own code: round ${r}/${rounds}`);
      children = await Promise.all(TARGETS.map((t) => forkServer(t.name, 'sluice.ts', { ...base, ...t.args })));
      for (const child of children) await saturate(child.url, pick(options, 200, 1000)); // warm-up: JIT, pools
      // A palindrome (A B C D D C B A): a server's two runs average out its place in the round and any drift along it.
      const listed = r % 2 === 1 ? [BARE, TWIN, STORE, SLUICE] : [SLUICE, STORE, TWIN, BARE];
      const runs: number[] = TARGETS.map(() => 0);
      for (const i of [...listed, ...[...listed].reverse()]) runs[i]! += (await pacedCpu(children[i]!, durationMs)) / 2;
      for (const [i, us] of runs.entries()) cpu[i]!.push(us);
      progress(`own code: round ${r}: ${runs.map((us) => round(us, 1)).join(' / ')} µs per request (bare / its copy / store alone / Sluice)`);
      await Promise.all(children.map((child) => child.stop()));
      children = [];
    }
    const above = (a: number, b: number) => cpu[a]!.map((us, r) => us / cpu[b]![r]! - 1);
    return {
      rounds,
      cpuUs: cpu.map((runs) => round(median(runs), 1)),
      own: spreadOf(above(SLUICE, BARE)),
      store: spreadOf(above(STORE, BARE)),
      engine: spreadOf(above(SLUICE, STORE)),
      noise: spreadOf(above(BARE, TWIN)),
    };
  } finally {
    for (const child of [...children, upstream]) await child.stop();
    await redis.release();
  }
}

/** CPU µs per completed request of one paced run. */
async function pacedCpu(child: Child, durationMs: number): Promise<number> {
  const before = child.cpuMicros();
  const result = await paced(child.url, PACED_RATE, durationMs);
  return (child.cpuMicros() - before) / Math.max(1, result.completed);
}

export function spreadOf(values: readonly number[]): Spread {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const k = medianIntervalRank(n);
  const at = (i: number) => round(sorted[i]!, 3);
  return { median: round(median(sorted), 3), interval: k > 0 ? [at(k - 1), at(n - k)] : undefined, quartiles: [at(Math.floor((n - 1) / 4)), at(Math.ceil((3 * (n - 1)) / 4))] };
}

/**
 * The rank k (from 1) such that the k-th smallest and k-th largest of `n`
 * values hold their distribution's median with at least 90 % confidence:
 * the largest k with P(Binomial(n, ½) < k) ≤ 5 %; 0 when n is too small for
 * 90 % (fewer than 5 values: even their whole range holds less).
 */
export function medianIntervalRank(n: number): number {
  let below = 0;
  let k = 0;
  for (let j = 0; j < n; j++) {
    below += binomialHalf(n, j);
    if (below > 0.05) break;
    k = j + 1;
  }
  return k;
}

/** P(Binomial(n, ½) = j). */
function binomialHalf(n: number, j: number): number {
  let p = 0.5 ** n;
  for (let i = 0; i < j; i++) p = (p * (n - i)) / (i + 1);
  return p;
}

export function printOwnCode(result: OwnCodeResult): string {
  const table = textTable(
    ['target', `CPU µs/request, paced ${PACED_RATE}/s (median)`],
    TARGETS.map((t, i) => [t.name, result.cpuUs[i]!]),
  );
  const interval = (s: Spread) => (s.interval ? `90 % interval of the median ${s.interval[0]}–${s.interval[1]}` : 'too few rounds for a 90 % interval');
  const line = (what: string, s: Spread) => `${what}: ${s.median} (${interval(s)}; middle half of the rounds ${s.quartiles[0]}–${s.quartiles[1]})`;
  const [low, high] = result.own.interval ?? [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY];
  const verdict = high <= 0.05 ? 'met' : low > 0.05 ? 'missed' : 'not told apart from 0.05 by these rounds';
  return [
    table,
    `${result.rounds} rounds; each ratio per round, then its median`,
    `${line("Sluice's code above the bare script call (one script call ÷ bare EVALSHA − 1), paced", result.own)} (target ≤ 0.05: ${verdict})`,
    line('  of it, the store (the store alone ÷ bare EVALSHA − 1)', result.store),
    line('  of it, the engine around the store (one script call ÷ the store alone − 1)', result.engine),
    line('noise: the bare-script server ÷ its second copy − 1, paced', result.noise),
  ].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const result = await runOwnCodeBench(parseOptions());
    console.log(`\n${printOwnCode(result)}`);
  });
}
