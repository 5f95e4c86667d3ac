// npm run bench:faults [-- --quick]
// Added latency per decision over time while Redis is killed, restarted,
// frozen (SIGSTOP) and resumed, through the resilience layer (createEngine
// with its defaults: the adaptive deadline, breaker, local fallback). An
// evenly paced load; each decision timed from its call to its answer; one row
// per 500 ms, with the longest deadline a decision of it was given (a decision
// waits that long for a Redis that is frozen before the breaker opens).
import { pino } from 'pino';
import { parseRule } from '../src/policies/rule.js';
import { createEngine } from '../src/engine-factory/create-engine.js';
import { isMain, runMain } from './lib/cleanup.js';
import { LatencyRecorder, round } from './lib/latency.js';
import { offer } from './lib/open-loop.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';

export const BUCKET_MS = 500;

export interface FaultBucket {
  fromMs: number;
  event: string;
  decisions: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
  /** The longest deadline a decision of this row was sent with, ms. */
  deadlineMs: number;
  /** Share of decisions Redis made; the rest came from the fallback, cache, or open/closed modes. */
  redisShare: number;
  bySource: Record<string, number>;
}

export interface FaultsResult {
  ratePerSec: number;
  timeline: { atMs: number; event: string }[];
  buckets: FaultBucket[];
}

export async function runFaultsBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<FaultsResult> {
  const phase = pick(options, 1000, 3000);
  const rate = pick(options, 1000, 2000);
  const redis = await benchRedis();
  const engine = createEngine({ redis: { url: redis.url }, instances: 1, logger: pino({ level: 'silent' }), hotKey: { autoLeaseRatePerSec: 0 } });
  const rule = parseRule({ policy: 'token_bucket', capacity: 1_000_000, refillPerSecond: 1_000_000 });
  const timeline = [
    { atMs: phase, event: 'Redis killed (SIGKILL)' },
    { atMs: 2 * phase, event: 'Redis restarted (empty)' },
    { atMs: 3 * phase, event: 'Redis frozen (SIGSTOP)' },
    { atMs: 4 * phase, event: 'Redis resumed (SIGCONT)' },
  ];
  const totalMs = 5 * phase;
  const buckets = Array.from({ length: Math.ceil(totalMs / BUCKET_MS) }, () => ({ recorder: new LatencyRecorder(), bySource: {} as Record<string, number>, deadlineMs: 0 }));
  try {
    await engine.peek({ tag: 'warm-up', name: 'warm-up' }, rule);
    progress(`faults: ${rate} decisions/s for ${totalMs / 1000} s; kill, restart, SIGSTOP, SIGCONT every ${phase / 1000} s`);
    const start = performance.now();
    const actions = [() => redis.kill(), () => redis.restart(), async () => redis.pause(), async () => redis.resume()];
    const timers = timeline.map((step, i) =>
      setTimeout(() => {
        progress(`faults: ${step.event}`);
        void actions[i]!();
      }, step.atMs),
    );
    await offer(rate, totalMs, async (seq, scheduled) => {
      // Timed from the call, not the schedule: the 1 ms timer loop's own lag is not the engine's.
      const deadlineMs = engine.health().deadlineMs ?? 0;
      const called = performance.now();
      const decision = await engine.decide({ tag: `tenant-${seq % 100}`, name: 'create-order' }, rule);
      const bucket = buckets[Math.min(buckets.length - 1, Math.floor((scheduled - start) / BUCKET_MS))]!;
      bucket.recorder.recordMs(performance.now() - called);
      bucket.bySource[decision.source] = (bucket.bySource[decision.source] ?? 0) + 1;
      bucket.deadlineMs = Math.max(bucket.deadlineMs, deadlineMs);
    });
    for (const timer of timers) clearTimeout(timer);
    redis.resume();
  } finally {
    await engine.close().catch(() => undefined);
    await redis.release();
  }
  return {
    ratePerSec: rate,
    timeline,
    buckets: buckets.map((b, i) => {
      const s = b.recorder.summary();
      const fromMs = i * BUCKET_MS;
      const event = timeline.filter((t) => t.atMs >= fromMs && t.atMs < fromMs + BUCKET_MS).map((t) => t.event).join('; ');
      return { fromMs, event, decisions: s.count, p50Us: s.p50Us, p99Us: s.p99Us, maxUs: s.maxUs, deadlineMs: round(b.deadlineMs, 1), redisShare: round((b.bySource['redis'] ?? 0) / Math.max(1, s.count), 3), bySource: b.bySource };
    }),
  };
}

/** The faults table's columns and one row's cells, for this bench's print and the report. */
export const FAULT_HEADER = ['from ms', 'event', 'decisions', 'p50 µs', 'p99 µs', 'max µs', 'deadline ms', 'from Redis', 'sources'];

export function faultCells(b: FaultBucket): (string | number)[] {
  const sources = Object.entries(b.bySource).map(([source, n]) => `${source} ${n}`).join(', ');
  return [b.fromMs, b.event, b.decisions, b.p50Us, b.p99Us, b.maxUs, b.deadlineMs, `${round(b.redisShare * 100)} %`, sources];
}

export function printFaults(result: FaultsResult): string {
  return textTable(FAULT_HEADER, result.buckets.map(faultCells));
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const result = await runFaultsBench(parseOptions());
    console.log('\n' + printFaults(result));
  });
}
