// npm run bench:distance [-- --quick]
// Redis at a network distance: the delaying proxy (test/helpers/delay-proxy.ts,
// a process of its own; this kernel has no netem) between the engine and a
// local redis-server, at round trips of 0.5, 1 and 2 ms with jitter, and 2 ms
// with 10 ms spikes. Each distance twice, back to back (the order alternating):
// with the default, adaptive deadline and with a fixed `store.deadlineMs: 5`.
// Per row: the latency of 2,500 decisions/s (open loop, one instance, 100
// keys), the share decided on Redis and the deadline at the end; then four
// instances, after a short paced warm-up, at 2× one key's limit: admitted
// against the limit.
import { loadavg } from 'node:os';
import { pino } from 'pino';
import { parseRule } from '../src/policies/rule.js';
import { createResilientEngine } from '../src/engine-factory/create-engine.js';
import type { ResilientEngine } from '../src/limiter/engine/resilient-engine.js';
import { type Delay, startDelayProxy } from '../test/helpers/delay-proxy.js';
import { isMain, runMain } from './lib/cleanup.js';
import { LatencyRecorder, round } from './lib/latency.js';
import { offer } from './lib/open-loop.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';

const RATE = 2500;
const INSTANCES = 4;
const LIMIT = 400;

interface Distance {
  label: string;
  /** undefined: straight to Redis, no proxy. */
  oneWay: Delay | undefined;
}

/** The deadlines compared: undefined is the default (adaptive), a number a fixed store.deadlineMs. */
const DEADLINES: readonly (number | undefined)[] = [undefined, 5];

const DISTANCES: Distance[] = [
  { label: 'loopback, no proxy', oneWay: undefined },
  { label: 'proxy, 0 ms', oneWay: { ms: 0 } },
  { label: '0.5 ms RTT ±20 %', oneWay: { ms: 0.25, jitterMs: 0.1 } },
  { label: '1 ms RTT ±20 %', oneWay: { ms: 0.5, jitterMs: 0.2 } },
  { label: '2 ms RTT ±20 %', oneWay: { ms: 1, jitterMs: 0.4 } },
  { label: '2 ms RTT, 10 ms spikes (1 %)', oneWay: { ms: 1, jitterMs: 0.4, spike: { ms: 10, probability: 0.01 } } },
];

export interface DistanceRow {
  label: string;
  /** `adaptive` (the default) or `fixed 5 ms`. */
  deadline: string;
  /** The paced engine's deadline when its run ended, ms. */
  deadlineMs: number;
  decisions: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
  /** Share of the paced decisions made on Redis (the rest: the fallback at the deadline). */
  redisShare: number;
  /** Four instances at 2× the limit of one key: admitted, and how many of those decisions fell back. */
  admitted: number;
  limit: number;
  accuracyFallbacks: number;
}

export async function runDistanceBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<DistanceRow[]> {
  const durationMs = pick(options, 1000, 4000);
  const redis = await benchRedis();
  const rows: DistanceRow[] = [];
  try {
    for (const [i, distance] of DISTANCES.entries()) {
      const proxy = distance.oneWay ? await startDelayProxy({ targetPort: redis.port, toServer: distance.oneWay, toClient: distance.oneWay }) : undefined;
      try {
        const url = `redis://127.0.0.1:${proxy?.port ?? redis.port}`;
        // Alternating which goes first: neither always meets the machine fresher.
        for (const deadlineMs of i % 2 === 0 ? DEADLINES : [...DEADLINES].reverse()) {
          const deadline = deadlineMs === undefined ? 'adaptive' : `fixed ${deadlineMs} ms`;
          progress(`distance: ${distance.label}, ${deadline}: ${RATE} decisions/s for ${durationMs / 1000} s, then ${INSTANCES} instances at 2× a limit of ${LIMIT}`);
          const paced = await pacedLatency(url, durationMs, deadlineMs);
          rows.push({ label: distance.label, deadline, ...paced, ...(await accuracy(url, `${distance.label}-${deadline}`, deadlineMs)) });
        }
      } finally {
        await proxy?.close();
      }
    }
  } finally {
    await redis.release();
  }
  return rows;
}

function engineAt(url: string, instances: number, deadlineMs: number | undefined): ResilientEngine {
  return createResilientEngine({ redis: { url }, instances, logger: pino({ level: 'silent' }), hotKey: { autoLeaseRatePerSec: 0 }, ...(deadlineMs ? { deadlineMs } : {}) });
}

type Paced = Pick<DistanceRow, 'decisions' | 'p50Us' | 'p99Us' | 'maxUs' | 'redisShare' | 'deadlineMs'>;

async function pacedLatency(url: string, durationMs: number, deadlineMs: number | undefined): Promise<Paced> {
  const engine = engineAt(url, 1, deadlineMs);
  const rule = parseRule({ policy: 'token_bucket', capacity: 1_000_000, refillPerSecond: 1_000_000 });
  const recorder = new LatencyRecorder();
  let fromRedis = 0;
  let endedAt: number;
  try {
    await engine.peek({ tag: 'warm-up', name: 'warm-up' }, rule);
    await offer(RATE, durationMs, async (seq) => {
      const called = performance.now();
      const decision = await engine.decide({ tag: `tenant-${seq % 100}`, name: 'orders' }, rule);
      recorder.recordMs(performance.now() - called);
      if (decision.source === 'redis') fromRedis++;
    });
    endedAt = engine.deadlineMs;
  } finally {
    await engine.close();
  }
  const s = recorder.summary();
  return { decisions: s.count, p50Us: s.p50Us, p99Us: s.p99Us, maxUs: s.maxUs, redisShare: round(fromRedis / Math.max(1, s.count), 4), deadlineMs: endedAt };
}

/**
 * Each instance, after a paced warm-up on other keys (as a running gateway has
 * had), sends its half-limit in batches of 25 at once; the key's limit is
 * LIMIT over all of them.
 */
async function accuracy(url: string, label: string, deadlineMs: number | undefined): Promise<Pick<DistanceRow, 'admitted' | 'limit' | 'accuracyFallbacks'>> {
  const engines = Array.from({ length: INSTANCES }, () => engineAt(url, INSTANCES, deadlineMs));
  const rule = parseRule({ policy: 'token_bucket', capacity: LIMIT, refillPerSecond: 0.001 });
  const tenant = `accuracy-${label.replace(/[^A-Za-z0-9]+/g, '-')}-${Date.now()}`;
  let admitted = 0;
  let fallbacks = 0;
  try {
    await Promise.all(engines.map((engine) => engine.peek({ tag: 'warm-up', name: 'warm-up' }, rule)));
    await Promise.all(engines.map((engine, i) => warmUp(engine, `warm-${i}`)));
    for (let round = 0; round < (2 * LIMIT) / (INSTANCES * 25); round++) {
      const decisions = await Promise.all(engines.flatMap((engine) => Array.from({ length: 25 }, () => engine.decide({ tag: tenant, name: 'orders' }, rule))));
      admitted += decisions.filter((d) => d.allowed).length;
      fallbacks += decisions.filter((d) => d.source === 'fallback').length;
    }
  } finally {
    await Promise.all(engines.map((engine) => engine.close()));
  }
  return { admitted, limit: LIMIT, accuracyFallbacks: fallbacks };
}

/** 100 decisions in waves of 4, one wave after the other (about 100 ms at 2 ms), on keys of its own. */
async function warmUp(engine: ResilientEngine, tenant: string): Promise<void> {
  const rule = parseRule({ policy: 'token_bucket', capacity: 1_000_000, refillPerSecond: 1_000_000 });
  for (let wave = 0; wave < 25; wave++) await Promise.all(Array.from({ length: 4 }, (_, j) => engine.decide({ tag: `${tenant}-${j}`, name: 'orders' }, rule)));
}

export function printDistance(rows: DistanceRow[]): string {
  return textTable(
    ['distance', 'deadline', 'decisions', 'p50 µs', 'p99 µs', 'max µs', 'on Redis', 'deadline at end', `${INSTANCES} instances: admitted / limit`, 'of which fallback'],
    rows.map((r) => [
      r.label,
      r.deadline,
      r.decisions,
      r.p50Us,
      r.p99Us,
      r.maxUs,
      `${round(r.redisShare * 100, 2)} %`,
      `${r.deadlineMs} ms`,
      `${r.admitted} / ${r.limit}`,
      r.accuracyFallbacks,
    ]),
  );
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const rows = await runDistanceBench(parseOptions());
    // The figures are only as quiet as the machine: its load is printed with them.
    console.log(`\n${printDistance(rows)}\nload average after the run: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`);
  });
}
