// 1,000 concurrent decisions on one key with a 5 ms deadline: the deadline
// measures Redis, not this process's busy event loop, so nothing falls back
// and exactly the capacity is admitted, on one engine and across two.
// Each engine decides once on another key first: the burst is what is measured,
// not the fresh connection's handshake and the script's first load. The
// deadlines of a guard's calls share one timer (deadline.ts): the burst arms a
// few timers, not one per call, and still judges none of them too early.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import type { Rule } from '../../../src/policies/rule.js';
import type { ResilientEngine } from '../../../src/limiter/engine/resilient-engine.js';
import { allowedCount, bucket, burst, eventually, resilientEngine } from '../../helpers/resilient-engine.js';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis.stop();
});

/** The timers `run` arms (setTimeout calls) while it runs, and what it returned. */
async function countingTimers<T>(run: () => Promise<T>): Promise<{ result: T; timers: number }> {
  const original = globalThis.setTimeout;
  let timers = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof original>) => {
    timers++;
    return original(...args);
  }) as typeof original;
  try {
    return { result: await run(), timers };
  } finally {
    globalThis.setTimeout = original;
  }
}

/** The client connected and the script loaded in Redis, so the 5 ms deadline measures the burst alone. */
let warmUps = 0;
async function warmUp(engine: ResilientEngine, rule: Rule): Promise<void> {
  await eventually(async () => (await engine.decide({ tag: `warm-up-${warmUps++}`, name: 'orders' }, rule)).source === 'redis', 10_000, 'a decision from Redis');
}

test('1,000 concurrent decisions, capacity 20, deadline 5 ms: 20 allowed, breaker stays closed', async () => {
  const client = redis.client();
  const engine = resilientEngine({ redis: client, deadlineMs: 5 });
  try {
    const rule = bucket(20, 1);
    await warmUp(engine, rule);
    const { result: decisions, timers } = await countingTimers(() => burst(engine, 1000, rule, 'burst-one'));
    // One timer per call would be 1,000 or more; the guard's one timer re-arms a few times per deadline.
    assert.ok(timers < 100, `${timers} timers armed for 1,000 calls`);
    const allowed = allowedCount(decisions);
    assert.ok(allowed >= 20 && allowed <= 21, `allowed ${allowed}`);
    // A plain 5 ms timer fires for hundreds of these calls on 2 cores; the
    // Redis-silence deadline fires for none in a quiet run. A cold, busy CI
    // machine can still stall the whole process past it for a few calls: those
    // must neither admit anything locally nor open the breaker.
    assert.ok(engine.counters().deadlineTimeouts < 100, `${engine.counters().deadlineTimeouts} deadline timeouts`);
    assert.equal(decisions.filter((d) => d.allowed && d.source !== 'redis').length, 0, 'nothing admitted outside Redis');
    assert.equal(engine.health().mode, 'redis');
  } finally {
    await engine.close();
    client.disconnect();
  }
});

test('the same across two engines on two clients', async () => {
  const clients = [redis.client(), redis.client()];
  const engines = clients.map((client, i) => resilientEngine({ redis: client, deadlineMs: 5, instanceId: `burst-${i}` }));
  try {
    const rule = bucket(20, 1);
    await Promise.all(engines.map((engine) => warmUp(engine, rule)));
    const { result: all, timers } = await countingTimers(() => Promise.all(engines.map((engine) => burst(engine, 500, rule, 'burst-two'))));
    assert.ok(timers < 100, `${timers} timers armed for 1,000 calls on two engines`);
    const allowed = all.reduce((sum, decisions) => sum + allowedCount(decisions), 0);
    assert.ok(allowed >= 20 && allowed <= 21, `allowed ${allowed}`);
    for (const [i, engine] of engines.entries()) {
      assert.ok(engine.counters().deadlineTimeouts < 100, `${engine.counters().deadlineTimeouts} deadline timeouts`);
      assert.equal(all[i]!.filter((d) => d.allowed && d.source !== 'redis').length, 0, 'nothing admitted outside Redis');
      assert.equal(engine.health().mode, 'redis');
    }
  } finally {
    await Promise.all(engines.map((engine) => engine.close()));
    for (const client of clients) client.disconnect();
  }
});
