// Engine-level peers on the same Redis, in the same run (issue 6): Sluice's
// token bucket and GCRA, rate-limiter-flexible's RateLimiterRedis, and the
// reference script (design-token-bucket.lua) called the Spring Cloud Gateway way. For each: decisions/s
// and p99 at 64 and 512 callers, Redis µs per decision, bytes per key, and how
// many of 1,000 concurrent calls on a fresh key are allowed against a capacity of 100.
import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { bucketKey } from '../../src/core/ids.js';
import { parseRule } from '../../src/policies/rule.js';
import { RedisStore } from '../../src/stores/redis-store.js';
import { runClosedLoop } from './closed-loop.js';
import { loadDesignScript, springFailOpens, springStyleCall } from './design-script.js';
import { round } from './latency.js';
import { commandStats, resetStats } from './redis-info.js';
import { bytesPerBucket } from './redis-memory.js';
import { ROUTES, tenantId } from './rules.js';

export interface PeerResult {
  subject: string;
  runs: { concurrency: number; opsPerSec: number; p99Us: number; redisUsPerDecision: number }[];
  bytesPerKey: number;
  /** Allowed out of 1,000 concurrent calls on a fresh key with capacity 100. */
  burstAllowed: number;
  burstCapacity: number;
}

interface Subject {
  name: string;
  /** The Redis command that carries one decision. */
  command: string;
  /** One decision on bucket `t`; `big` picks a limit that never refuses, else capacity 100. */
  decide(t: number, big: boolean): Promise<boolean>;
}

const KEYS = 1000;
/** Bucket `b`: tenants with 3 routes each, as in the target peak (lib/scale.ts). */
const tenantOf = (b: number) => tenantId(Math.floor(b / ROUTES.length));
const routeOf = (b: number) => ROUTES[b % ROUTES.length]!;

function subjects(client: Redis): Subject[] {
  const store = new RedisStore(client);
  const sluice = (policy: 'token_bucket' | 'gcra'): Subject => {
    const big = parseRule({ policy, capacity: 1_000_000, refillPerSecond: 1_000_000 });
    const small = parseRule({ policy, capacity: 100, refillPerSecond: 0.001 });
    return {
      name: `sluice ${policy}`,
      command: 'evalsha',
      decide: async (t, isBig) => (await store.consume(bucketKey(tenantOf(t), routeOf(t)), isBig ? big : small, 1)).allowed,
    };
  };
  // rate-limiter-flexible's only Redis algorithm is a fixed window counter (INCR + PEXPIRE in one script).
  const flexBig = new RateLimiterRedis({ storeClient: client, points: 1_000_000_000, duration: 3600, keyPrefix: 'rlflx' });
  const flexSmall = new RateLimiterRedis({ storeClient: client, points: 100, duration: 3600, keyPrefix: 'rlflx' });
  return [
    sluice('token_bucket'),
    sluice('gcra'),
    {
      name: 'rate-limiter-flexible (RateLimiterRedis)',
      command: 'evalsha',
      decide: (t, isBig) =>
        (isBig ? flexBig : flexSmall).consume(`{${tenantOf(t)}}:${routeOf(t)}`, 1).then(
          () => true,
          (rejection: unknown) => {
            if (rejection instanceof Error) throw rejection;
            return false;
          },
        ),
    },
    {
      name: 'design script, Spring Cloud Gateway style',
      command: 'evalsha',
      decide: async (t, isBig) => (await springStyleCall(client, tenantOf(t), routeOf(t), isBig ? 1_000_000 : 100, isBig ? 1_000_000 : 0.001)).allowed,
    },
  ];
}

export async function runPeers(client: Redis, admin: Redis, durationMs: number, memoryBuckets: number): Promise<PeerResult[]> {
  await loadDesignScript(client);
  const results: PeerResult[] = [];
  for (const subject of subjects(client)) {
    const runs: PeerResult['runs'] = [];
    for (const concurrency of [64, 512]) {
      await admin.flushall();
      await runClosedLoop(concurrency, durationMs / 4, (seq) => subject.decide(seq % KEYS, true));
      await resetStats(admin);
      const run = await runClosedLoop(concurrency, durationMs, (seq) => subject.decide(seq % KEYS, true));
      const stat = (await commandStats(admin)).get(subject.command);
      runs.push({ concurrency, opsPerSec: run.opsPerSec, p99Us: run.latency.p99Us, redisUsPerDecision: round(stat?.usecPerCall ?? Number.NaN, 2) });
    }
    // Memory: small limit, each key written once (the Spring-style key gets a
    // TTL of 2 × fill time, rate-limiter-flexible's the window: both outlive the count).
    const memory = await bytesPerBucket(admin, memoryBuckets, (i) => subject.decide(i, false));
    await admin.flushall();
    const burst = await Promise.all(Array.from({ length: 1000 }, () => subject.decide(999_999, false)));
    results.push({
      subject: subject.name,
      runs,
      bytesPerKey: memory.bytesPerBucket,
      burstAllowed: burst.filter(Boolean).length,
      burstCapacity: 100,
    });
  }
  if (springFailOpens.count > 0) throw new Error(`the Spring-style peer failed open ${springFailOpens.count} times: its figures would be wrong`);
  return results;
}
