// npm run bench:overhead [-- --quick]
// The engine's own code per decision, in one process, apart from Redis and
// HTTP: the resilient engine over Redis (createResilientEngine, leasing off)
// whose store answers every consume itself on the next turn of the event
// loop, against the same answer asked for with no engine around it. Two
// settings: hot (decisions back to back: the code and its data stay in the
// CPU's caches) and cold (a walk over 8 MB between decisions, as a gateway's
// other work between two paced requests evicts them). The cold figure is the
// one that tracks a paced request's cost (bench:cost); the hot one shows how
// much work a decision does. Wall ns per decision of each, in turns, medians
// of per-round differences. Then the bytes a decision allocates, engine and
// bare: the heap's growth over a batch of decisions, the median over the
// batches no collection ran in. It moves far less between runs of the same
// length than the timings do, so a change to the engine's footprint shows in
// it where the timings cannot tell it from their noise; compare runs of the
// same length only (what the JIT optimizes away changes with its warm-up).
import { PerformanceObserver } from 'node:perf_hooks';
import { pino } from 'pino';
import type { Decision } from '../src/core/decision.js';
import { createResilientEngine } from '../src/engine-factory/create-engine.js';
import type { LimitCall } from '../src/limiter/engine/types.js';
import { parseRule } from '../src/policies/rule.js';
import type { SharedStore } from '../src/stores/store.js';
import { isMain, runMain } from './lib/cleanup.js';
import { median, round } from './lib/latency.js';
import { parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';

const RULE = parseRule({ policy: 'token_bucket', capacity: 1_000_000_000, refillPerSecond: 1_000_000_000 });
const ANSWER: Decision = { allowed: true, remaining: 999_999_999, limit: 1_000_000_000, resetAfterMs: 0, retryAfterMs: 0, delayMs: 0, source: 'redis' };

/** The store's answer on the next turn of the event loop, as a reply read from a socket would come. */
const nextTurn = (): Promise<Decision> => new Promise((resolve) => setImmediate(resolve, ANSWER));

/** What the cold setting walks between two decisions: more than the CPU's caches hold. */
const EVICTING = new Float64Array(8 * 131_072);
let walked = 0;
function evictCaches(): void {
  for (let i = 0; i < EVICTING.length; i += 8) walked += EVICTING[i]!;
}

export interface OverheadRow {
  setting: 'hot' | 'cold';
  engineNs: number;
  bareNs: number;
  ownNs: number;
}

/** Heap bytes allocated per decision. */
export interface AllocationRow {
  engineBytes: number;
  bareBytes: number;
  ownBytes: number;
}

/** Batches measured, and decisions in each: a batch allocates far less than the young generation holds, so most see no collection. */
const ALLOCATION_BATCHES = 60;
const ALLOCATION_BATCH = 200;

/** Collections so far: a batch a collection ran in is not counted (its heap shrank meanwhile). */
let collections = 0;

/**
 * Bytes per decision of `decide` (three tenants in turn): the heap's growth
 * over each batch that no collection ran in, per decision; the median of those.
 */
async function allocated(decide: (limits: LimitCall[]) => Promise<unknown>): Promise<number> {
  const limits = [0, 1, 2].map((t) => [{ bucket: { tag: `tenant-${t}`, name: 'create-order' }, rule: RULE, cost: 1 }]);
  const observer = new PerformanceObserver((list) => {
    collections += list.getEntries().length;
  });
  observer.observe({ entryTypes: ['gc'] });
  const perDecision: number[] = [];
  try {
    for (let b = 0; b < ALLOCATION_BATCHES; b++) {
      const seen = collections;
      const before = process.memoryUsage().heapUsed;
      for (let i = 0; i < ALLOCATION_BATCH; i++) await decide(limits[i % 3]!);
      const grown = process.memoryUsage().heapUsed - before;
      await nextTurn(); // the observer hears of a collection in the batch by now
      if (collections === seen) perDecision.push(grown / ALLOCATION_BATCH);
    }
  } finally {
    observer.disconnect();
  }
  return median(perDecision);
}

/** ns per decision of `decide` over `count` decisions (three tenants in turn), the caches evicted before each when `cold`. */
async function timed(decide: (limits: LimitCall[]) => Promise<unknown>, count: number, cold: boolean): Promise<number> {
  let spent = 0n;
  for (let i = 0; i < count; i++) {
    if (cold) evictCaches();
    const limits = [{ bucket: { tag: `tenant-${i % 3}`, name: 'create-order' }, rule: RULE, cost: 1 }];
    const started = process.hrtime.bigint();
    await decide(limits);
    spent += process.hrtime.bigint() - started;
  }
  return Number(spent) / count;
}

export async function runOverheadBench(rounds: number, count: number): Promise<{ rows: OverheadRow[]; allocation: AllocationRow }> {
  const redis = await benchRedis();
  const engine = createResilientEngine({
    redis: { url: redis.url },
    hotKey: { autoLeaseRatePerSec: 0 },
    logger: pino({ level: 'silent' }),
    wrapStore: <S extends SharedStore>(store: S): S => Object.assign(store, { consume: nextTurn }),
  });
  try {
    const rows: OverheadRow[] = [];
    for (const setting of ['hot', 'cold'] as const) {
      const cold = setting === 'cold';
      await timed((limits) => engine.decideAll(limits), count, cold); // warm-up: JIT
      await timed(nextTurn, count, cold);
      const engineNs: number[] = [];
      const bareNs: number[] = [];
      for (let r = 0; r < rounds; r++) {
        engineNs.push(await timed((limits) => engine.decideAll(limits), count, cold));
        bareNs.push(await timed(nextTurn, count, cold));
      }
      const own = engineNs.map((ns, r) => ns - bareNs[r]!);
      rows.push({ setting, engineNs: round(median(engineNs), 0), bareNs: round(median(bareNs), 0), ownNs: round(median(own), 0) });
    }
    const engineBytes = await allocated((limits) => engine.decideAll(limits));
    const bareBytes = await allocated(nextTurn);
    return { rows, allocation: { engineBytes: round(engineBytes, 0), bareBytes: round(bareBytes, 0), ownBytes: round(engineBytes - bareBytes, 0) } };
  } finally {
    await engine.close();
    await redis.release();
    if (walked < 0) console.log(walked); // keeps the walk from being optimized away
  }
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const options = parseOptions();
    const rounds = pick(options, 3, 9);
    const count = pick(options, 5_000, 20_000);
    const { rows, allocation } = await runOverheadBench(rounds, count);
    console.log(`${rounds} rounds of ${count} decisions each, engine and bare in turns; medians\n`);
    console.log(textTable(['setting', 'engine ns/decision', 'bare ns/decision', "the engine's own ns"], rows.map((r) => [r.setting, r.engineNs, r.bareNs, r.ownNs])));
    const { engineBytes, bareBytes, ownBytes } = allocation;
    console.log(`\nheap bytes allocated per decision (the median of up to ${ALLOCATION_BATCHES} batches of ${ALLOCATION_BATCH} without a collection): engine ${engineBytes}, bare ${bareBytes}, the engine's own ${ownBytes}`);
  });
}
