// npm run bench:engine [-- --quick]
// Every registered policy × store (memory, Redis) at 1, 64 and 512 concurrent
// callers; Redis server µs per decision; bytes per bucket; redis-benchmark on
// the same script as the ceiling and a bare ioredis EVALSHA loop on the
// reference script (lib/design-token-bucket.lua) as the floor; then the engine-level peers.
import type { Redis } from 'ioredis';
import { bucketKey } from '../src/core/ids.js';
import type { PolicyName } from '../src/policies/rule.js';
import { policyOf } from '../src/policies/index.js';
import { scriptSha, scriptSource } from '../src/stores/redis/scripts.js';
import { MemoryStore } from '../src/stores/memory-store.js';
import { RedisStore } from '../src/stores/redis-store.js';
import type { Store } from '../src/stores/store.js';
import { isMain, runMain } from './lib/cleanup.js';
import { runClosedLoop } from './lib/closed-loop.js';
import { bareDesignCall, DESIGN_SHA, loadDesignScript } from './lib/design-script.js';
import { type PeerResult, runPeers } from './lib/engine-peers.js';
import { median, round } from './lib/latency.js';
import { type BenchOptions, parseOptions, pick } from './lib/options.js';
import { commandStats, resetStats } from './lib/redis-info.js';
import { type CeilingResult, redisBenchmark } from './lib/redis-benchmark.js';
import { bytesPerBucket, type MemoryResult } from './lib/redis-memory.js';
import { memoryBucketKey, memoryRule, registeredPolicies, tenantId, throughputRule } from './lib/rules.js';
import { benchRedis } from './lib/servers.js';
import { textTable } from './lib/table.js';

export const CONCURRENCY = [1, 64, 512] as const;

export interface EngineCell {
  subject: string;
  store: 'memory' | 'redis';
  concurrency: number;
  opsPerSec: number;
  p50Us: number;
  p99Us: number;
  p999Us: number;
  /** Redis server time per decision (EVALSHA usec_per_call); absent for the memory store. */
  redisUsPerDecision?: number;
}

export interface EngineResult {
  cells: EngineCell[];
  ceiling: { sluiceTokenBucket: CeilingResult; designScript: CeilingResult };
  memory: { subject: string; result: MemoryResult }[];
  peers: PeerResult[];
  /** Sluice token bucket ÷ floor, from alternating runs (which also give the Redis µs ratios). */
  pairs: { concurrency: number; ratios: number[]; median: number }[];
  ratios: {
    sluiceOverFloor64: number;
    sluiceOverFloor512: number;
    sluiceRedisUs: number;
    designRedisUs: number;
    bytesPerBucket: number;
  };
  policies: PolicyName[];
}

const KEYS = 1000;
const keyOf = (i: number) => bucketKey(tenantId(i % KEYS), 'create-order');

export async function runEngineBench(options: BenchOptions, progress: (line: string) => void = console.log): Promise<EngineResult> {
  const durationMs = pick(options, 150, 2000);
  const warmupMs = pick(options, 30, 500);
  const memoryBuckets = pick(options, 3_000, 100_000);
  const policies = registeredPolicies();
  const redis = await benchRedis();
  const client = redis.client();
  const admin = redis.client();
  try {
    const cells: EngineCell[] = [];
    const measure = async (subject: string, storeKind: 'memory' | 'redis', concurrency: number, op: (seq: number) => Promise<unknown>) => {
      if (storeKind === 'redis') await admin.flushall();
      await runClosedLoop(concurrency, warmupMs, op);
      if (storeKind === 'redis') await resetStats(admin);
      const run = await runClosedLoop(concurrency, durationMs, op);
      const cell: EngineCell = { subject, store: storeKind, concurrency, opsPerSec: run.opsPerSec, p50Us: run.latency.p50Us, p99Us: run.latency.p99Us, p999Us: run.latency.p999Us };
      if (storeKind === 'redis') cell.redisUsPerDecision = round((await commandStats(admin)).get('evalsha')?.usecPerCall ?? Number.NaN, 2);
      if (run.errors > 0) throw new Error(`${subject} on ${storeKind}: ${run.errors} failed calls`);
      cells.push(cell);
    };

    for (const policy of policies) {
      const rule = throughputRule(policy);
      for (const storeKind of ['memory', 'redis'] as const) {
        const store: Store = storeKind === 'memory' ? new MemoryStore() : new RedisStore(client);
        for (const concurrency of CONCURRENCY) {
          progress(`engine: ${policy} on ${storeKind}, ${concurrency} callers`);
          await measure(policy, storeKind, concurrency, (seq) => store.consume(keyOf(seq), rule, 1));
        }
        if (storeKind === 'memory') await store.close();
      }
    }

    progress('engine: floor (bare ioredis EVALSHA loop, design script)');
    await loadDesignScript(client);
    for (const concurrency of CONCURRENCY) {
      await measure('design script, bare loop (floor)', 'redis', concurrency, (seq) => bareDesignCall(client, keyOf(seq).key, 1_000_000, 1_000_000));
    }

    // The figures that have a target are measured on their own: Sluice and the floor
    // alternate (A B A B …) and the medians are kept: decisions/s as a ratio, and
    // Redis server µs per decision (both run the same number of scripts per decision).
    const pairs: EngineResult['pairs'] = [];
    const redisUs = { sluice: [] as number[], design: [] as number[] };
    const tbRule = throughputRule('token_bucket');
    const tbStore = new RedisStore(client);
    const timed = async (concurrency: number, op: (seq: number) => Promise<unknown>, us: number[]) => {
      await resetStats(admin);
      const run = await runClosedLoop(concurrency, durationMs, op);
      us.push((await commandStats(admin)).get('evalsha')?.usecPerCall ?? Number.NaN);
      return run.opsPerSec;
    };
    for (const concurrency of [64, 512]) {
      progress(`engine: Sluice token bucket vs floor, alternating, ${concurrency} callers`);
      const ratios: number[] = [];
      for (let repeat = 0; repeat < pick(options, 3, 5); repeat++) {
        const sluice = await timed(concurrency, (seq) => tbStore.consume(keyOf(seq), tbRule, 1), redisUs.sluice);
        const floor = await timed(concurrency, (seq) => bareDesignCall(client, keyOf(seq).key, 1_000_000, 1_000_000), redisUs.design);
        ratios.push(sluice / floor);
      }
      pairs.push({ concurrency, ratios: ratios.map((r) => round(r, 3)), median: round(median(ratios), 3) });
    }

    progress('engine: ceiling (redis-benchmark -c 64, EVALSHA on a fixed key)');
    const ceiling = await runCeiling(redis.port, admin, pick(options, 20_000, 200_000));

    const memory: EngineResult['memory'] = [];
    for (const policy of policies) {
      progress(`engine: bytes per bucket, ${policy}, ${memoryBuckets.toLocaleString('en-US')} buckets`);
      const store = new RedisStore(client);
      const rule = memoryRule(policy);
      memory.push({ subject: `sluice ${policy}`, result: await bytesPerBucket(admin, memoryBuckets, (i) => store.consume(memoryBucketKey(i), rule, 1)) });
    }
    memory.push({
      subject: 'design script',
      result: await bytesPerBucket(admin, memoryBuckets, (i) => bareDesignCall(client, memoryBucketKey(i).key, 200, 0.001)),
    });

    progress('engine: peers (rate-limiter-flexible, Spring-style design script)');
    const peers = await runPeers(client, admin, durationMs, memoryBuckets);

    const ratio = (concurrency: number) => pairs.find((p) => p.concurrency === concurrency)?.median ?? Number.NaN;
    return {
      cells,
      ceiling,
      memory,
      peers,
      pairs,
      policies,
      ratios: {
        sluiceOverFloor64: ratio(64),
        sluiceOverFloor512: ratio(512),
        sluiceRedisUs: round(median(redisUs.sluice), 2),
        designRedisUs: round(median(redisUs.design), 2),
        bytesPerBucket: memory.find((m) => m.subject === 'sluice token_bucket')?.result.bytesPerBucket ?? Number.NaN,
      },
    };
  } finally {
    client.disconnect();
    admin.disconnect();
    await redis.release();
  }
}

async function runCeiling(port: number, admin: Redis, requests: number): Promise<EngineResult['ceiling']> {
  const rule = throughputRule('token_bucket');
  await admin.script('LOAD', scriptSource('token_bucket'));
  // The same key and arguments RedisStore sends (runScript): the tenant's hash, the route as the last argument.
  const bucket = bucketKey('tenant-00042', 'create-order');
  const args = ['1', '', ...policyOf(rule).model.luaArgs(rule).map(String), bucket.field];
  const sluiceTokenBucket = await redisBenchmark(port, requests, ['EVALSHA', scriptSha('token_bucket'), 1, bucket.hash, ...args]);
  const designScript = await redisBenchmark(port, requests, ['EVALSHA', DESIGN_SHA, 1, bucket.key, 1_000_000, 1_000_000]);
  return { sluiceTokenBucket, designScript };
}

export function printEngine(result: EngineResult): string {
  const lines: string[] = [];
  lines.push(
    textTable(
      ['subject', 'store', 'callers', 'decisions/s', 'p50 µs', 'p99 µs', 'p999 µs', 'Redis µs/decision'],
      result.cells.map((c) => [c.subject, c.store, c.concurrency, c.opsPerSec, c.p50Us, c.p99Us, c.p999Us, c.redisUsPerDecision]),
    ),
  );
  const { sluiceTokenBucket: s, designScript: d } = result.ceiling;
  const ceil = (c: CeilingResult) => (c.error ? `failed (${c.error})` : `${c.requestsPerSec.toLocaleString('en-US')} /s, p99 ${c.p99Ms} ms`);
  lines.push('', `ceiling, redis-benchmark -c 64 -P 1, fixed key: Sluice token bucket ${ceil(s)}; design script ${ceil(d)}`);
  lines.push('', textTable(['bucket', 'buckets', 'keys stored', 'bytes/bucket (used_memory)', 'MEMORY USAGE'], result.memory.map((m) => [m.subject, m.result.buckets, m.result.keysStored, m.result.bytesPerBucket, m.result.memoryUsageSample])));
  lines.push(
    '',
    textTable(
      ['peer', 'decisions/s @64', 'p99 µs @64', 'decisions/s @512', 'p99 µs @512', 'Redis µs', 'bytes/key', 'allowed of 1,000 (cap 100)'],
      result.peers.map((p) => [p.subject, p.runs[0]?.opsPerSec, p.runs[0]?.p99Us, p.runs[1]?.opsPerSec, p.runs[1]?.p99Us, p.runs[0]?.redisUsPerDecision, p.bytesPerKey, p.burstAllowed]),
    ),
  );
  const r = result.ratios;
  lines.push(
    '',
    `Sluice Redis token bucket ÷ bare loop (median of alternating runs ${result.pairs.map((p) => `@${p.concurrency}: ${p.ratios.join(', ')}`).join('; ')}): ${r.sluiceOverFloor64} at 64 callers, ${r.sluiceOverFloor512} at 512 (target ≥ 0.9)`,
    `Redis µs per decision (median of the same alternating runs): Sluice ${r.sluiceRedisUs}, design script ${r.designRedisUs} (target: no higher); bytes per bucket ${r.bytesPerBucket} (target ≤ 120)`,
  );
  return lines.join('\n');
}

if (isMain(import.meta.url)) {
  await runMain(async () => {
    const result = await runEngineBench(parseOptions());
    console.log('\n' + printEngine(result));
  });
}
