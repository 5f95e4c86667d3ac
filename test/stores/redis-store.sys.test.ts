// RedisStore on a real redis-server started for this file, plus the bug
// classes that recur in every peer's tracker, each a named test.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import { bucketKey, derivedId, shardKey } from '../../src/core/ids.js';
import { parseRule } from '../../src/policies/rule.js';
import { createLimiter } from '../../src/limiter/engine/create-limiter.js';
import { RedisStore } from '../../src/stores/redis-store.js';
import { scriptSha } from '../../src/stores/redis/scripts.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { storeSuite } from './store-suite.js';

describe('RedisStore (standalone)', () => {
  let server: RedisServer;
  let store: RedisStore;
  let admin: Redis;

  before(async () => {
    server = await startRedis();
    store = new RedisStore(server.client());
    admin = server.client();
  });
  after(async () => {
    await store.close();
    admin.disconnect();
    await server.stop();
  });

  storeSuite(() => store);

  it('keys follow the documented layout (docs/redis.md) with the tenant as hash tag, and carry a TTL', async () => {
    const rule = parseRule({ policy: 'token_bucket', capacity: 10, refillPerSecond: 5 });
    await admin.flushall();
    await store.consume(bucketKey('shop-a', 'create-order'), rule, 1);
    assert.deepEqual(await admin.keys('rl:*'), ['rl:{shop-a}'], 'one hash per tenant');
    assert.deepEqual(await admin.hkeys('rl:{shop-a}'), ['create-order'], 'one field per route');
    const ttl = await admin.pttl('rl:{shop-a}');
    assert.ok(ttl > 0 && ttl <= 200, `TTL ${ttl} ms = time until full again`);
    await admin.flushall();
  });

  it('shards, derived buckets and the sliding log keep the key and field of docs/redis.md; reset removes each', async () => {
    const bucket = parseRule({ policy: 'token_bucket', capacity: 10, refillPerSecond: 5 });
    const log = parseRule({ policy: 'sliding_window_log', limit: 10, windowMs: 1000 });
    await admin.flushall();
    const shard = shardKey('shop-b', 'search', 3);
    const derived = bucketKey('shop-b', derivedId('ip.', '10.0.0.1'));
    const sliding = bucketKey('shop-b', 'log');
    await Promise.all([store.consume(shard, bucket, 1), store.consume(derived, bucket, 1), store.consume(sliding, log, 1)]);
    assert.deepEqual((await admin.keys('rl:*')).sort(), ['rl:shop-b:search:3', 'rl:{shop-b}:log', 'rl:{shop-b}~ip.10.0.0.1']);
    assert.deepEqual(await admin.hkeys('rl:shop-b:search:3'), ['_'], 'a shard is a hash of one field');
    assert.deepEqual(await admin.hkeys('rl:{shop-b}~ip.10.0.0.1'), ['_'], 'a derived bucket is a hash of one field');
    assert.equal(await admin.type('rl:{shop-b}:log'), 'zset', 'the sliding log keeps its own sorted set');
    assert.ok((await store.inspect(sliding, log)).ttlMs! > 0, 'inspect reads the TTL of the own key');
    await Promise.all([store.reset(shard), store.reset(derived), store.reset(sliding)]);
    assert.deepEqual(await admin.keys('rl:*'), []);
  });

  it("a tenant's hash lives as long as its longest-lived bucket: a write extends its TTL, never shortens it", async () => {
    const slow = parseRule({ policy: 'token_bucket', capacity: 10, refillPerSecond: 1 }); // 1 token = 1 s to refill
    const fast = parseRule({ policy: 'token_bucket', capacity: 10, refillPerSecond: 1000 });
    await store.consume(bucketKey('ttl-tenant', 'slow'), slow, 2);
    const first = await admin.pttl('rl:{ttl-tenant}');
    assert.ok(first > 1000 && first <= 2000, `TTL ${first}`);
    await store.consume(bucketKey('ttl-tenant', 'fast'), fast, 1); // a new field with a 1 ms TTL
    assert.ok((await admin.pttl('rl:{ttl-tenant}')) > 1000, 'not shortened by a new field');
    await store.consume(bucketKey('ttl-tenant', 'slow'), slow, 3); // an existing field, now 5 s from full
    assert.ok((await admin.pttl('rl:{ttl-tenant}')) > 4000, 'extended by an existing field');
  });

  it('SCRIPT FLUSH mid-traffic: NOSCRIPT is recovered by resending the script, no decision lost', async () => {
    const rule = parseRule({ policy: 'token_bucket', capacity: 100, refillPerSecond: 0.001 });
    const key = bucketKey('flush', 'route');
    const first = await Promise.all(Array.from({ length: 50 }, () => store.consume(key, rule, 1)));
    await admin.script('FLUSH');
    assert.deepEqual(await admin.script('EXISTS', scriptSha('token_bucket')), [0]);
    const second = await Promise.all(Array.from({ length: 100 }, () => store.consume(key, rule, 1)));
    assert.equal([...first, ...second].filter((d) => d.allowed).length, 100);
    assert.deepEqual(await admin.script('EXISTS', scriptSha('token_bucket')), [1]);
  });

  it('Redis restart: the store reconnects and reloads its scripts by itself', async () => {
    const rule = parseRule({ policy: 'gcra', capacity: 5, refillPerSecond: 0.001 });
    const key = bucketKey('restart', 'route');
    assert.equal((await store.consume(key, rule, 5)).allowed, true);
    await server.restart(); // empty: buckets and scripts gone
    let decision: Awaited<ReturnType<RedisStore['consume']>> | undefined;
    for (let i = 0; i < 100 && !decision; i++) {
      decision = await store.consume(key, rule, 1).catch(() => undefined);
      if (!decision) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(decision, 'decides again after the restart');
    assert.equal(decision.allowed, true);
    assert.equal(decision.remaining, 4, 'a bucket that comes back starts full');
  });

  it('callers with clocks skewed by seconds change nothing: time comes from Redis TIME', async () => {
    const rule = { policy: 'token_bucket', capacity: 2, refillPerSecond: 1 } as const;
    const realNow = Date.now;
    const realPerf = performance.now.bind(performance);
    const limiter = createLimiter({ id: 'skew', ...rule }, store);
    try {
      Date.now = () => realNow() + 5_000;
      performance.now = () => realPerf() + 5_000;
      const ahead = [await limiter.consume('tenant'), await limiter.consume('tenant'), await limiter.consume('tenant')];
      Date.now = () => realNow() - 5_000;
      performance.now = () => realPerf() - 5_000;
      const behind = await limiter.consume('tenant');
      assert.deepEqual(ahead.map((d) => d.allowed), [true, true, false]);
      assert.equal(behind.allowed, false, 'a caller 10 s behind gets no extra refill');
    } finally {
      Date.now = realNow;
      performance.now = realPerf;
    }
  });

  it('concurrent over-admission: two stores on two connections share one bucket exactly', async () => {
    const other = new RedisStore(server.client());
    try {
      const rule = parseRule({ policy: 'token_bucket', capacity: 50, refillPerSecond: 0.001 });
      const key = bucketKey('shared', 'route');
      const decisions = await Promise.all(Array.from({ length: 600 }, (_, i) => (i % 2 ? store : other).consume(key, rule, 1)));
      assert.equal(decisions.filter((d) => d.allowed).length, 50);
    } finally {
      await other.close();
    }
  });

  it('inspect reports the state, TTL and where the bucket lives', async () => {
    const rule = parseRule({ policy: 'token_bucket', capacity: 10, refillPerSecond: 1 });
    const key = bucketKey('inspect', 'route');
    await store.consume(key, rule, 4);
    const info = await store.inspect(key, rule);
    assert.equal(info.decision.remaining, 6);
    assert.ok(info.ttlMs !== undefined && info.ttlMs > 3000 && info.ttlMs <= 4000);
    assert.equal(info.location, `redis 127.0.0.1:${server.port}`);
  });
});
