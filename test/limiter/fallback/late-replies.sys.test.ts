// Redis answers after the deadline: the request was decided by the fallback,
// and the reply that comes later is reconciled with that decision. Deadlines
// are forced with a brief SIGSTOP of a real redis-server, shorter than the
// time after which a silent Redis counts as a breaker failure.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { ResilientEngine } from '../../../src/limiter/engine/resilient-engine.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { allowedCount, bucket, eventually, resilientEngine } from '../../helpers/resilient-engine.js';

let redis: RedisServer;
let client: Redis;
let engine: ResilientEngine;
before(async () => {
  redis = await startRedis();
  client = redis.client();
  // 20 ms deadline: a silent Redis fails the breaker only after 250 ms (breaker.silenceMs), so a 60 ms pause is only late.
  engine = resilientEngine({ redis: client, deadlineMs: 20, instances: 1 });
  await eventually(async () => (await engine.decide({ tag: 'warm', name: 'up' }, bucket(10, 1))).source === 'redis', 5000, 'Redis ready');
});
after(async () => {
  redis.resume();
  await engine.close();
  client.disconnect();
  await redis.stop();
});

/** Runs `decide` while Redis is paused for `ms`, so every call misses its deadline and gets a late reply. */
async function duringPause<T>(ms: number, decide: () => Promise<T>): Promise<T> {
  redis.pause();
  try {
    const result = decide();
    await sleep(ms);
    return await result.finally(() => undefined);
  } finally {
    redis.resume();
  }
}

async function settled(expected: number): Promise<void> {
  const total = () => Object.values(engine.counters().lateReplies).reduce((sum, n) => sum + n, 0);
  await eventually(() => total() >= expected, 5000, 'late replies reconciled');
}

test('fresh keys decided after a missed deadline are admitted, and the breaker stays closed', async () => {
  const rule = bucket(10, 1);
  const before = { ...engine.counters().lateReplies };
  redis.pause();
  const pending = Array.from({ length: 30 }, (_, i) => engine.decide({ tag: `fresh-${i}`, name: 'orders' }, rule));
  await sleep(60);
  redis.resume();
  const decisions = await Promise.all(pending);
  assert.ok(engine.counters().deadlineTimeouts > 0, 'the pause was seen as deadline misses');
  assert.equal(allowedCount(decisions), 30, 'a key Redis never refused must not get a 429');
  assert.equal(engine.health().mode, 'redis', 'a late reply is not a breaker failure');
  assert.equal(engine.counters().breakerRejects, 0);
  await settled(before.agreed + before.charged + before.refunded + before.uncorrected + before.lost + 30);
  assert.equal(engine.counters().lateReplies.agreed - before.agreed, 30, 'Redis admitted the same requests');
  // Each bucket is charged once: the local admission and Redis's are the same request.
  const peek = await engine.peek({ tag: 'fresh-0', name: 'orders' }, rule);
  assert.deepEqual([peek.source, peek.remaining], ['redis', 9]);
});

test('an over-admission by the fallback is charged to the bucket as a debt', async () => {
  const rule = bucket(5, 0.01); // refill cannot blur the counts
  assert.equal((await engine.decide({ tag: 'over', name: 'orders' }, rule)).allowed, true); // the engine's last word: 4 left
  const otherClient = redis.client();
  const other = resilientEngine({ redis: otherClient, deadlineMs: 20, instances: 1, instanceId: 'other' });
  try {
    for (let i = 0; i < 4; i++) assert.equal((await other.decide({ tag: 'over', name: 'orders' }, rule)).allowed, true); // Redis: empty
  } finally {
    await other.close();
    otherClient.disconnect();
  }
  const charged = engine.counters().lateReplies.charged;
  const decisions = await duringPause(60, () => Promise.all(Array.from({ length: 3 }, () => engine.decide({ tag: 'over', name: 'orders' }, rule))));
  const admitted = allowedCount(decisions);
  assert.ok(admitted >= 1, 'the stale local state admitted something');
  await eventually(() => engine.counters().lateReplies.charged - charged === admitted, 5000, 'the over-admissions charged');
  // The bucket now owes what was over-admitted: a full deficit whose refill starts later than now.
  const [redisKey, field] = ['rl:{over}', 'orders']; // field `orders` of the tenant's hash
  const [state, [seconds, micros]] = await Promise.all([client.hget(redisKey, field), client.time()]);
  const ts = Number(state!.split(':')[1]);
  const nowUs = Number(seconds) * 1e6 + Number(micros);
  assert.ok(ts > nowUs + (admitted - 0.5) * 100e6, `the debt of ${admitted} units is ${(ts - nowUs) / 1e6} s of refill`);
});

test('a false refusal by the fallback is given back to the bucket', async () => {
  const rule = bucket(5, 0.01);
  for (let i = 0; i < 5; i++) assert.equal((await engine.decide({ tag: 'refused', name: 'orders' }, rule)).allowed, true); // last word: empty
  const [redisKey, field] = ['rl:{refused}', 'orders'];
  await client.hdel(redisKey, field); // Redis: full again, unknown to the engine
  const refunded = engine.counters().lateReplies.refunded;
  const decision = await duringPause(60, () => engine.decide({ tag: 'refused', name: 'orders' }, rule));
  assert.deepEqual([decision.allowed, decision.source], [false, 'fallback']);
  await eventually(() => engine.counters().lateReplies.refunded === refunded + 1, 5000, 'the false refusal refunded');
  const peek = await engine.peek({ tag: 'refused', name: 'orders' }, rule);
  assert.deepEqual([peek.source, peek.remaining], ['redis', 5], 'the refused request costs nothing');
});
