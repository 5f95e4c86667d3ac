// npm run bench:hotkey [-- --quick]
// One hot key: ~20,000 req/s offered across several engine
// instances against a 10,000/s limit (burst 1,000). Redis calls per request (the engines'
// own store-call counters, checked against INFO commandstats) and admission
// versus the limit, with leasing (batch 50), with sharding (10 sub-buckets),
// and with neither (automatic leasing off).
import { pino } from 'pino';
import { parseRule, type Rule } from '../src/policies/rule.js';
import { createEngine } from '../src/engine-factory/create-engine.js';
import type { Engine } from '../src/limiter/engine/engine.js';
import { isMain, runMain } from './lib/cleanup.js';
import { round } from './lib/latency.js';
import { offer } from './lib/open-loop.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { resetStats, scriptCalls } from './lib/redis-info.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';

export const HOT_RATE = 20_000;
export const INSTANCES = 4;
const LIMIT = 10_000;
/** Burst: small beside the rate, so the limit binds from the first second. */
const CAPACITY = 1_000;

export interface HotKeyRow {
  mode: 'neither' | 'leasing (batch 50)' | 'sharding (10 shards)';
  offered: number;
  allowed: number;
  /** capacity + rate × d */
  expected: number;
  /** allowed ÷ expected − 1: positive is over-admission. */
  overAdmission: number;
  redisCallsPerRequest: number;
  /** Script calls Redis itself counted (includes the engines' membership heartbeats). */
  redisScriptCallsPerRequest: number;
  bySource: Record<string, number>;
  /** Redis calls past the 5 ms deadline, and calls the open breaker refused: why any decision fell back. */
  deadlineTimeouts: number;
  breakerRejects: number;
}

export interface HotKeyResult {
  durationMs: number;
  instances: number;
  offeredPerSec: number;
  achievedPerSec: number[];
  rows: HotKeyRow[];
}

const MODES: { mode: HotKeyRow['mode']; rule: Rule }[] = [
  { mode: 'neither', rule: parseRule({ policy: 'token_bucket', capacity: CAPACITY, refillPerSecond: LIMIT }) },
  { mode: 'leasing (batch 50)', rule: parseRule({ policy: 'token_bucket', capacity: CAPACITY, refillPerSecond: LIMIT, lease: { batch: 50 } }) },
  { mode: 'sharding (10 shards)', rule: parseRule({ policy: 'token_bucket', capacity: CAPACITY, refillPerSecond: LIMIT, shards: 10 }) },
];

type Counted = Engine;

export async function runHotKeyBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<HotKeyResult> {
  const durationMs = pick(options, 1000, 5000);
  const redis = await benchRedis();
  const admin = redis.client();
  const logger = pino({ level: 'silent' });
  const rows: HotKeyRow[] = [];
  const achievedPerSec: number[] = [];
  try {
    for (const { mode, rule } of MODES) {
      progress(`hotkey: ${mode}, ${HOT_RATE.toLocaleString('en-US')} req/s offered over ${INSTANCES} engines`);
      const engines: Counted[] = Array.from({ length: INSTANCES }, () =>
        createEngine({ redis: { url: redis.url }, instances: INSTANCES, logger, hotKey: { autoLeaseRatePerSec: 0 } }),
      );
      const tenant = `hot-${mode.split(' ')[0]}`;
      await Promise.all(engines.map((e) => e.peek({ tag: 'warm-up', name: 'warm-up' }, rule)));
      await resetStats(admin);
      const callsBefore = engines.reduce((sum, e) => sum + (e.counters().storeCalls), 0);
      let allowed = 0;
      const bySource: Record<string, number> = {};
      const started = performance.now();
      const offered = await offer(HOT_RATE, durationMs, async (seq) => {
        const decision = await engines[seq % INSTANCES]!.decide({ tag: tenant, name: 'create-order' }, rule);
        if (decision.allowed) allowed++;
        bySource[decision.source] = (bySource[decision.source] ?? 0) + 1;
      });
      achievedPerSec.push(round((offered / (performance.now() - started)) * 1000));
      const calls = engines.reduce((sum, e) => sum + (e.counters().storeCalls), 0) - callsBefore;
      const scripts = await scriptCalls(admin);
      const expected = CAPACITY + (LIMIT * durationMs) / 1000;
      rows.push({
        mode,
        offered,
        allowed,
        expected,
        overAdmission: round(allowed / expected - 1, 4),
        redisCallsPerRequest: round(calls / offered, 4),
        redisScriptCallsPerRequest: round(scripts.calls / offered, 4),
        bySource,
        deadlineTimeouts: engines.reduce((sum, e) => sum + (e.counters().deadlineTimeouts), 0),
        breakerRejects: engines.reduce((sum, e) => sum + (e.counters().breakerRejects), 0),
      });
      await Promise.all(engines.map((e) => e.close()));
    }
    return { durationMs, instances: INSTANCES, offeredPerSec: HOT_RATE, achievedPerSec, rows };
  } finally {
    admin.disconnect();
    await redis.release();
  }
}

export function printHotKey(result: HotKeyResult): string {
  return [
    textTable(
      ['mode', 'offered', 'allowed', 'expected', 'over-admission', 'Redis calls/req (engine)', 'script calls/req (Redis)', 'deadline misses', 'sources'],
      result.rows.map((r) => [r.mode, r.offered, r.allowed, r.expected, `${round(r.overAdmission * 100, 2)} %`, r.redisCallsPerRequest, r.redisScriptCallsPerRequest, r.deadlineTimeouts, Object.entries(r.bySource).map(([s, n]) => `${s} ${n}`).join(', ')]),
    ),
    `limit ${LIMIT.toLocaleString('en-US')}/s (capacity ${CAPACITY.toLocaleString('en-US')}), ${result.instances} engines in one process, achieved offer ${result.achievedPerSec.map((r) => r.toLocaleString('en-US')).join(' / ')} req/s over ${result.durationMs / 1000} s`,
  ].join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const result = await runHotKeyBench(parseOptions());
    console.log('\n' + printHotKey(result));
  });
}
