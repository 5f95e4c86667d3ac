// Redis killed, paused (SIGSTOP) and restarted under load: no decision rejects,
// the fallback holds each instance to its 1/N part, and once the breaker is
// open no call waits for the deadline. Counts, never milliseconds.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Decision } from '../../src/core/decision.js';
import type { ResilientEngine } from '../../src/limiter/engine/resilient-engine.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { allowedCount, bucket, burst, eventually, resilientEngine } from '../helpers/resilient-engine.js';

const servers: RedisServer[] = [];
after(async () => {
  await Promise.all(servers.map((server) => server.stop()));
});

interface Pair {
  redis: RedisServer;
  engines: ResilientEngine[];
  close(): Promise<void>;
}

/** Two engines ("instances") on two clients of one fresh Redis, both counted by membership. */
async function pair(): Promise<Pair> {
  const redis = await startRedis();
  servers.push(redis);
  const clients = [redis.client(), redis.client()];
  for (const client of clients) client.on('error', () => undefined);
  const engines = clients.map((client, i) =>
    resilientEngine({ redis: client, deadlineMs: 5, heartbeatMs: 100, memberTtlMs: 1000, instanceId: `fault-${i}`, breaker: { resetTimeoutMs: 300 } }),
  );
  await eventually(() => engines.every((engine) => engine.instances === 2), 5000, 'both instances counted');
  return {
    redis,
    engines,
    async close() {
      await Promise.all(engines.map((engine) => engine.close()));
      for (const client of clients) client.disconnect();
    },
  };
}

/** Keeps `engines` busy with waves of concurrent decisions until stopped; collects every decision, fails on any rejection. */
function load(engines: ResilientEngine[], rule = bucket(1000, 100)) {
  let running = true;
  const decisions: Decision[] = [];
  const done = (async () => {
    while (running) {
      const wave = engines.flatMap((engine) => Array.from({ length: 20 }, () => engine.decide({ tag: 'loaded', name: 'orders' }, rule)));
      decisions.push(...(await Promise.all(wave)));
      await sleep(2);
    }
  })();
  return {
    decisions,
    async stop() {
      running = false;
      await done;
    },
  };
}

/** While the breaker is open: decisions complete without reaching Redis (only half-open probes do). */
async function assertNoWaiting(engine: ResilientEngine): Promise<void> {
  await eventually(() => engine.health().mode === 'fallback', 5000, 'breaker open');
  const callsBefore = engine.counters().storeCalls;
  const timeoutsBefore = engine.counters().deadlineTimeouts;
  const decisions = await burst(engine, 500, bucket(20, 1), 'open-breaker');
  const calls = engine.counters().storeCalls - callsBefore;
  assert.equal(decisions.length, 500);
  // At most a couple of half-open probes reach the client: the other ~500 never waited for a deadline.
  assert.ok(calls <= 2, `${calls} calls reached Redis while the breaker was open`);
  assert.ok(engine.counters().deadlineTimeouts - timeoutsBefore <= 2);
}

/** A key first seen while Redis is down: each instance admits its half of capacity 20 (± refill). */
async function assertFallbackShare(engines: ResilientEngine[], tenant: string): Promise<void> {
  const rule = bucket(20, 1);
  for (const engine of engines) {
    const decisions = await burst(engine, 100, rule, tenant);
    const allowed = allowedCount(decisions);
    assert.ok(allowed >= 10 && allowed <= 11, `one instance admitted ${allowed} of a fallback share of 10`);
    assert.ok(decisions.every((d) => d.source === 'fallback'));
  }
}

test('Redis killed under load: no rejection, fallback shares enforced, no waiting once open', async () => {
  const { redis, engines, close } = await pair();
  try {
    const running = load(engines);
    await sleep(200);
    await redis.kill();
    await eventually(() => engines.every((engine) => engine.health().mode === 'fallback'), 5000, 'fallback mode');
    await sleep(100);
    await running.stop(); // rejects if any decision threw
    assert.ok(running.decisions.some((d) => d.source === 'redis'));
    assert.ok(running.decisions.some((d) => d.source === 'fallback'));
    for (const engine of engines) assert.equal(engine.instances, 2, 'the last known count is kept while Redis is down');
    await assertFallbackShare(engines, 'killed-new');
    await assertNoWaiting(engines[0]!);

    const open = await engines[0]!.decide({ tag: 't', name: 'r' }, bucket(1, 1, { onStoreDown: 'open' }));
    assert.deepEqual([open.allowed, open.source], [true, 'open']);
    const closed = await engines[0]!.decide({ tag: 't', name: 'r' }, bucket(1, 1, { onStoreDown: 'closed' }));
    assert.deepEqual([closed.allowed, closed.source], [false, 'closed']);
  } finally {
    await close();
  }
});

test('Redis paused with SIGSTOP: the deadline path, same guarantees, then SIGCONT', async () => {
  const { redis, engines, close } = await pair();
  try {
    const running = load(engines);
    await sleep(200);
    redis.pause();
    await eventually(() => engines.every((engine) => engine.health().mode === 'fallback'), 5000, 'fallback mode');
    await sleep(100);
    await running.stop();
    for (const engine of engines) assert.ok(engine.counters().deadlineTimeouts > 0, 'the pause was seen as deadline timeouts');
    await assertFallbackShare(engines, 'paused-new');
    await assertNoWaiting(engines[1]!);
    redis.resume();
    await eventually(async () => (await engines[0]!.decide({ tag: 'after', name: 'pause' }, bucket(20, 1))).source === 'redis', 5000, 'redis decisions again');
    assert.equal(engines[0]!.health().mode, 'redis');
  } finally {
    redis.resume();
    await close();
  }
});

test('Redis restarted empty: redis decisions within 5 s, scripts reloaded', async () => {
  const { redis, engines, close } = await pair();
  try {
    const rule = bucket(20, 1);
    const leased = bucket(1000, 100, { lease: { batch: 10 } });
    assert.equal((await engines[0]!.decide({ tag: 'before', name: 'restart' }, rule)).source, 'redis');
    await engines[0]!.decide({ tag: 'lease', name: 'restart' }, leased);
    await redis.restart();
    await eventually(async () => (await engines[0]!.decide({ tag: 'after', name: 'restart' }, rule)).source === 'redis', 5000, 'redis decisions after restart');
    // The leasing script is gone too (SCRIPT cache empty): NOSCRIPT is answered by resending it.
    const errorsBefore = engines[0]!.counters().storeErrors;
    const leaseCallsBefore = engines[0]!.counters().leaseCalls;
    for (let i = 0; i < 20; i++) assert.equal((await engines[0]!.decide({ tag: 'lease2', name: 'restart' }, leased)).allowed, true);
    assert.ok(engines[0]!.counters().leaseCalls > leaseCallsBefore);
    assert.equal(engines[0]!.counters().storeErrors, errorsBefore);
    const fresh = await burst(engines[1]!, 50, rule, 'fresh-after-restart');
    assert.ok(fresh.every((d) => d.source === 'redis' || d.source === 'cache'));
    assert.equal(allowedCount(fresh), 20);
  } finally {
    await close();
  }
});

test('what the fallback admitted while the breaker was open is charged to Redis once it closes', async () => {
  const redis = await startRedis();
  servers.push(redis);
  const client = redis.client();
  client.on('error', () => undefined);
  const engine = resilientEngine({ redis: client, deadlineMs: 5, instances: 1, breaker: { resetTimeoutMs: 300 } });
  try {
    const rule = bucket(10, 0.1); // one token per 10 s: refill cannot blur the count
    assert.equal(allowedCount(await burst(engine, 2, rule, 'owed')), 2);
    redis.pause();
    await eventually(async () => {
      await burst(engine, 10, rule, 'trip');
      return engine.health().mode === 'fallback';
    }, 5000, 'breaker open');

    // The local bucket starts from Redis's last word: 8 left.
    const outage = await burst(engine, 20, rule, 'owed');
    assert.ok(outage.every((d) => d.source === 'fallback'));
    const admitted = allowedCount(outage);
    assert.ok(admitted >= 8 && admitted <= 9, `the fallback admitted ${admitted}`);

    redis.resume();
    await eventually(async () => (await engine.decide({ tag: 'probe', name: 'orders' }, rule)).source === 'redis', 5000, 'redis decisions again');
    await eventually(() => engine.counters().chargedUnits >= admitted, 5000, 'the outage charged to Redis');
    // Redis alone would still hold 8 tokens; charged, the bucket holds what refilled meanwhile.
    const after = await engine.peek({ tag: 'owed', name: 'orders' }, rule);
    assert.equal(after.source, 'redis');
    assert.ok(after.remaining <= 1, `Redis still holds ${after.remaining} tokens of a bucket the outage spent`);
    assert.equal((await engine.decide({ tag: 'owed', name: 'orders' }, rule)).allowed, after.remaining >= 1);
  } finally {
    redis.resume();
    await engine.close();
    client.disconnect();
  }
});

test('after a pause, an owed key pays its debt before anything is admitted from the refilled bucket (probes included)', async () => {
  const { redis, engines, close } = await pair();
  try {
    const rule = bucket(10, 0.01); // one token per 100 s: refill cannot blur the count
    redis.pause();
    for (const engine of engines) {
      await eventually(async () => {
        await burst(engine, 10, rule, 'trip');
        return engine.health().mode === 'fallback';
      }, 5000, 'breaker open');
    }
    // Both instances spend their half of the (never seen) bucket locally: 10 in all.
    let outage = 0;
    for (const engine of engines) outage += allowedCount(await burst(engine, 20, rule, 'owed'));
    assert.equal(outage, 10);

    redis.resume();
    // The first decisions on the owed key after SIGCONT are the half-open probes themselves.
    let afterResume = 0;
    for (const engine of engines) {
      await eventually(async () => {
        const decision = await engine.decide({ tag: 'owed', name: 'orders' }, rule);
        if (decision.source === 'redis' && decision.allowed) afterResume++;
        return decision.source === 'redis';
      }, 5000, 'redis decisions again');
    }
    for (const engine of engines) afterResume += allowedCount((await burst(engine, 10, rule, 'owed')).filter((d) => d.source === 'redis'));
    // Each instance pays its own debt before its probe; the probe of the first one back can
    // only precede the other's debt: at most one unit, and then the bucket owes it.
    assert.ok(afterResume <= 1, `the bucket the outage spent admitted ${afterResume} more after SIGCONT`);
    const over = outage + afterResume - 10;
    // The bucket is field `orders` of the tenant's hash.
    const [redisKey, field] = ['rl:{owed}', 'orders'];
    const client = redis.client();
    try {
      const [state, [seconds, micros]] = await Promise.all([client.hget(redisKey, field), client.time()]);
      const [deficit, ts] = state!.split(':').map(Number);
      const owedUs = ts! - (Number(seconds) * 1e6 + Number(micros));
      assert.equal(deficit, 10e6, 'the bucket is empty');
      if (over > 0) assert.ok(owedUs > (over - 0.5) * 100e6, `the bucket owes ${owedUs / 100e6} of the ${over} units admitted past its capacity`);
    } finally {
      client.disconnect();
    }
  } finally {
    redis.resume();
    await close();
  }
});

test('an idle instance finds Redis back by itself: the open breaker probes in the background, no request needed', async () => {
  const { redis, engines, close } = await pair();
  try {
    await redis.kill();
    // Requests open the breakers, then stop: from here on nothing asks either engine anything.
    await Promise.all(engines.map((engine) => burst(engine, 20, bucket(20, 1), 'idle-probe')));
    await eventually(() => engines.every((engine) => engine.health().mode === 'fallback'), 5000, 'fallback mode');
    await redis.restart();
    await eventually(() => engines.every((engine) => engine.health().mode === 'redis'), 10_000, 'back on Redis without a request');
    assert.equal((await engines[0]!.decide({ tag: 'idle', name: 'after' }, bucket(20, 1))).source, 'redis');
  } finally {
    await close();
  }
});
