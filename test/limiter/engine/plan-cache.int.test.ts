// The plan cache (src/limiter/engine/plan.ts PlanCache): a kept plan is handed out only for
// the same rule object at the same region share; sharded rules are planned
// per call; the cache never holds more than MAX_PLANS; a BucketKey handed in
// is the plan's bucket as is. And through a real
// engine over redis-server: a reloaded rule (a new object) decides at once
// with its own limit, never with the cached plan of the old one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bucketKey, shardKey } from '../../../src/core/ids.js';
import { MAX_PLANS, PlanCache, planFor } from '../../../src/limiter/engine/plan.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { bucket, resilientEngine } from '../../helpers/resilient-engine.js';

test('the same tenant, route and rule get the same plan, equal to a fresh one', () => {
  const cache = new PlanCache();
  const rule = bucket(10, 5);
  const plan = cache.plan({ tag: 'shop', name: 'orders' }, rule, 1);
  assert.equal(cache.plan({ tag: 'shop', name: 'orders' }, rule, 1), plan);
  assert.deepEqual(plan, planFor({ tag: 'shop', name: 'orders' }, rule, 1));
  assert.notEqual(cache.plan({ tag: 'shop', name: 'other' }, rule, 1), plan, 'another route');
  assert.notEqual(cache.plan({ tag: 'mall', name: 'orders' }, rule, 1), plan, 'another tenant');
});

test('a new rule object or another region share plans anew', () => {
  const cache = new PlanCache();
  const first = cache.plan({ tag: 'shop', name: 'orders' }, bucket(10, 5), 1);
  const reloaded = cache.plan({ tag: 'shop', name: 'orders' }, bucket(20, 5), 1);
  assert.notEqual(reloaded, first);
  assert.equal(reloaded.rule.policy === 'token_bucket' && reloaded.rule.capacity, 20);
  const half = cache.plan({ tag: 'shop', name: 'orders' }, reloaded.original, 0.5);
  assert.equal(half.rule.policy === 'token_bucket' && half.rule.capacity, 10, 'the share scales the kept rule');
  assert.equal(cache.plan({ tag: 'shop', name: 'orders' }, reloaded.original, 0.5), half);
});

test('a sharded rule is planned per call (a random shard each time), not kept', () => {
  const cache = new PlanCache();
  const rule = bucket(100, 100, { shards: 8 });
  const shards = new Set(Array.from({ length: 200 }, () => cache.plan({ tag: 'shop', name: 'orders' }, rule, 1).bucket.key));
  assert.ok(shards.size > 1, `200 calls used ${shards.size} shard(s)`);
  assert.equal(cache.plans, 0);
});

test('a flood of ids never keeps more than MAX_PLANS plans', () => {
  const cache = new PlanCache();
  const rule = bucket(10, 5);
  for (let i = 0; i < MAX_PLANS + 500; i++) cache.plan({ tag: `~ip.10-0-${i >> 8}-${i & 255}`, name: 'orders' }, rule, 1);
  assert.ok(cache.plans <= MAX_PLANS, `${cache.plans} plans kept`);
  assert.ok(cache.plans > 0);
});

test('a BucketKey handed in is the plan\'s bucket as is, not built again; its ids alone plan the same key', () => {
  const rule = bucket(10, 5);
  const key = bucketKey('shop', 'orders');
  assert.equal(planFor(key, rule, 1).bucket, key);
  assert.deepEqual(planFor({ tag: 'shop', name: 'orders' }, rule, 1).bucket, key);
  const cache = new PlanCache();
  assert.equal(cache.plan(key, rule, 1).bucket, key);
  assert.equal(cache.plan({ tag: 'shop', name: 'orders' }, rule, 1).bucket, key, 'kept per tag and name, whichever shape asks');
  const sharded = planFor(key, bucket(10, 5, { shards: 4 }), 1, 2);
  assert.deepEqual(sharded.bucket, shardKey('shop', 'orders', 2));
  assert.equal(sharded.baseKey, key.key);
});

test('an object that only looks like a BucketKey is keyed from its ids, which are checked: a forged key never reaches the store', () => {
  const rule = bucket(10, 5);
  const forged = { tag: 'shop', name: 'orders', key: 'rl:{other}:x', hash: 'rl:{other}', field: 'x' };
  const plan = planFor(forged, rule, 1);
  assert.deepEqual(plan.bucket, bucketKey('shop', 'orders'));
  assert.notEqual(plan.bucket, forged);
  const badTag = { tag: 'sh}op', name: 'orders', key: 'rl:{sh}op}:orders', hash: 'rl:{sh}op}', field: 'orders' };
  assert.throws(() => planFor(badTag, rule, 1), /tenant/);
});

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis.stop();
});

test('the engine decides a reloaded rule with its own limit at once', async () => {
  const engine = resilientEngine({ redis: { url: redis.url }, hotKey: { autoLeaseRatePerSec: 0 } });
  try {
    const small = bucket(2, 0.001);
    assert.equal((await engine.decide({ tag: 'shop', name: 'orders' }, small)).limit, 2);
    assert.equal((await engine.decide({ tag: 'shop', name: 'orders' }, small)).allowed, true);
    assert.equal((await engine.decide({ tag: 'shop', name: 'orders' }, small)).allowed, false, 'the small bucket is empty');
    const large = bucket(50, 0.001);
    const decision = await engine.decide({ tag: 'shop', name: 'orders' }, large);
    assert.equal(decision.limit, 50);
    assert.equal(decision.allowed, true, 'the larger capacity admits at once');
  } finally {
    await engine.close();
  }
});
