// Hot keys on a real Redis: batch leasing (bounded over-admission,
// far fewer Redis calls), bucket sharding, the negative cache and automatic
// leasing of a key that runs hot on one instance.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CreateEngineOptions } from '../../../src/engine-factory/create-engine.js';
import type { ResilientEngine } from '../../../src/limiter/engine/resilient-engine.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { allowedCount, bucket, burst, resilientEngine } from '../../helpers/resilient-engine.js';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis.stop();
});

async function engines(n: number, options: Omit<CreateEngineOptions, 'redis'> = {}): Promise<{ list: ResilientEngine[]; close(): Promise<void> }> {
  const clients = Array.from({ length: n }, () => redis.client());
  // A generous deadline: a redis-server starved of CPU for 5 ms on a loaded machine would send decisions to the fallback, which is not what these tests are about.
  const list = clients.map((client, i) => resilientEngine({ redis: client, instances: n, instanceId: `hot-${i}`, deadlineMs: 2000, ...options }));
  return {
    list,
    async close() {
      await Promise.all(list.map((engine) => engine.close()));
      for (const client of clients) client.disconnect();
    },
  };
}

test('leasing with B = 50: at least 40x fewer Redis calls per decision, nothing over capacity from a fresh bucket', async () => {
  const { list, close } = await engines(3);
  try {
    const rule = bucket(10_000, 1, { lease: { batch: 50 } });
    const results = await Promise.all(list.map((engine) => burst(engine, 1000, rule, 'lease-calls')));
    const decisions = results.flat();
    assert.equal(allowedCount(decisions), 3000);
    const calls = list.reduce((sum, engine) => sum + engine.counters().storeCalls, 0);
    assert.ok(calls * 40 <= decisions.length, `${calls} Redis calls for ${decisions.length} decisions`);
    assert.ok(decisions.filter((d) => d.source === 'cache').length >= 2900);
  } finally {
    await close();
  }
});

test('leasing over-admission stays within capacity + rate x time + instances x batch', async () => {
  const { list, close } = await engines(3);
  try {
    const capacity = 100;
    const batch = 50;
    const rule = bucket(capacity, 1, { lease: { batch } });
    // Phase 1: from a fresh bucket, never more than capacity (+ refill).
    const first = [];
    for (const engine of list) first.push(await engine.decide({ tag: 'lease-bound', name: 'r' }, rule));
    assert.deepEqual(
      first.map((d) => d.allowed),
      [true, true, false],
    );
    // The bucket is full again (reset) while two instances still hold 49 leased units each.
    await list[2]!.reset({ tag: 'lease-bound', name: 'r' }, rule);
    const started = Date.now();
    const second = (await Promise.all(list.map((engine) => burst(engine, 200, rule, 'lease-bound', 'r')))).flat();
    const elapsedS = (Date.now() - started) / 1000;
    const admitted = allowedCount(second);
    const bound = capacity + Math.ceil(1 * elapsedS) + 1 + list.length * batch;
    assert.ok(admitted > capacity, `the held leases were spent (${admitted})`);
    assert.ok(admitted <= bound, `${admitted} admitted, bound ${bound}`);
  } finally {
    await close();
  }
});

test('sharding: N sub-buckets without hash tag, totals within N x floor(C/N) + refill', async () => {
  const { list, close } = await engines(2);
  try {
    const rule = bucket(100, 1, { shards: 4 });
    const decisions = (await Promise.all(list.map((engine) => burst(engine, 500, rule, 'sharded', 'orders')))).flat();
    const admitted = allowedCount(decisions);
    assert.ok(admitted >= 95 && admitted <= 101, `admitted ${admitted}`);
    const probe = redis.client();
    try {
      const keys = (await probe.keys('rl:sharded:orders:*')).sort();
      assert.deepEqual(keys, ['rl:sharded:orders:0', 'rl:sharded:orders:1', 'rl:sharded:orders:2', 'rl:sharded:orders:3']);
    } finally {
      probe.disconnect();
    }
  } finally {
    await close();
  }
});

test('negative cache: a refused flood costs no Redis call until T; a raised limit applies at once', async () => {
  const { list, close } = await engines(1);
  const engine = list[0]!;
  try {
    const rule = bucket(5, 0.1);
    const first = await burst(engine, 5, rule, 'flood');
    assert.equal(allowedCount(first), 5);
    const refused = await engine.decide({ tag: 'flood', name: 'orders' }, rule);
    assert.deepEqual([refused.allowed, refused.source], [false, 'redis']);
    const calls = engine.counters().storeCalls;
    const flood = await burst(engine, 500, rule, 'flood');
    assert.equal(engine.counters().storeCalls, calls, 'no Redis call for the refused flood');
    assert.ok(flood.every((d) => !d.allowed && d.source === 'cache' && d.retryAfterMs > 0));
    const raised = await engine.decide({ tag: 'flood', name: 'orders' }, bucket(50, 0.1));
    assert.deepEqual([raised.allowed, raised.source], [true, 'redis']);
    assert.equal(engine.counters().storeCalls, calls + 1);
  } finally {
    await close();
  }
});

test('automatic leasing: a key over the local rate leases by itself, and stops once it cools', async () => {
  let now = 1_000_000;
  const { list, close } = await engines(1, { hotKey: { autoLeaseRatePerSec: 100, batch: 20 }, now: () => now });
  const engine = list[0]!;
  try {
    const rule = bucket(100_000, 1000);
    for (let i = 0; i < 100; i++) await engine.decide({ tag: 'auto', name: 'orders' }, rule);
    assert.equal(engine.counters().leaseCalls, 0, 'below the rate: plain calls');
    const calls = engine.counters().storeCalls;
    const hot = await burst(engine, 200, rule, 'auto');
    assert.equal(allowedCount(hot), 200);
    assert.ok(engine.counters().leaseCalls > 0 && engine.counters().storeCalls - calls <= 12, `${engine.counters().storeCalls - calls} calls for 200 hot decisions`);
    now += 1000; // the next second still runs hot enough (> rate / 2 in the last one): still leasing
    await burst(engine, 10, rule, 'auto');
    const leases = engine.counters().leaseCalls;
    now += 1000; // a quiet second: cooled, back to one call per decision
    const callsBefore = engine.counters().storeCalls;
    for (let i = 0; i < 5; i++) assert.equal((await engine.decide({ tag: 'auto', name: 'orders' }, rule)).source, 'redis');
    assert.equal(engine.counters().leaseCalls, leases);
    assert.equal(engine.counters().storeCalls - callsBefore, 5);
  } finally {
    await close();
  }
});
