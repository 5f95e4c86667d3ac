// A shaped burst (leaky bucket, rate 2/s, burst 10, delay 4) while a real
// redis-server is paused (SIGSTOP) shorter than the breaker's silence: every
// call misses its deadline, the fallback decides, and the delays and the
// refusal are as on memory; the late replies agree. The same logic over the
// fake store: shaping-fallback.test.ts.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Decision } from '../../../src/core/decision.js';
import { parseRule } from '../../../src/policies/rule.js';
import { createEngine } from '../../../src/engine-factory/create-engine.js';
import type { ResilientEngine } from '../../../src/limiter/engine/resilient-engine.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { eventually, resilientEngine } from '../../helpers/resilient-engine.js';

let redis: RedisServer;
let client: Redis;
let engine: ResilientEngine;
before(async () => {
  redis = await startRedis();
  client = redis.client();
  // 20 ms deadline; a silent Redis fails the breaker only after 5 s, so the pause below is only late.
  engine = resilientEngine({ redis: client, deadlineMs: 20, instances: 1, breaker: { silenceMs: 5000 } });
  await eventually(async () => (await engine.decide({ tag: 'warm', name: 'up' }, parseRule({ policy: 'token_bucket', capacity: 10, refillPerSecond: 1 }))).source === 'redis', 5000, 'Redis ready');
});
after(async () => {
  redis.resume();
  await engine.close();
  client.disconnect();
  await redis.stop();
});

test('a shaped burst on a paused Redis keeps the delays and the refusal it gets on memory', { timeout: 30_000 }, async () => {
  const rule = parseRule({ policy: 'leaky_bucket', ratePerSecond: 2, burst: 10, delay: 4 });
  const memory = createEngine({});
  try {
    // Nine queued on both: the next two wait their turn (2.5 s and 3 s), the third finds the burst full.
    for (let i = 0; i < 9; i++) {
      assert.equal((await engine.decide({ tag: 'shop', name: 'shaped' }, rule)).source, 'redis');
      await memory.decide({ tag: 'shop', name: 'shaped' }, rule);
    }
    const onMemory = await Promise.all([0, 1, 2].map(() => memory.decide({ tag: 'shop', name: 'shaped' }, rule)));
    const before = engine.counters().lateReplies;
    redis.pause();
    let late: Decision[];
    try {
      late = await Promise.all([0, 1, 2].map(() => engine.decide({ tag: 'shop', name: 'shaped' }, rule)));
      await sleep(50);
    } finally {
      redis.resume();
    }
    assert.deepEqual(late.map((d) => d.source), ['fallback', 'fallback', 'fallback'], 'every call missed its deadline');
    assert.deepEqual(onMemory.map((d) => d.allowed), [true, true, false]);
    assert.deepEqual(late.map((d) => d.allowed), onMemory.map((d) => d.allowed), 'admitted and refused as on memory');
    late.forEach((d, i) => {
      // Generous: the fallback decided some ms after the memory engine, on a loaded machine maybe hundreds.
      assert.ok(Math.abs(d.delayMs - onMemory[i]!.delayMs) < 400, `request ${i}: delay ${d.delayMs} ms, on memory ${onMemory[i]!.delayMs} ms`);
    });
    const seen = (counts: Record<string, number>) => Object.values(counts).reduce((sum, n) => sum + n, 0);
    await eventually(() => seen(engine.counters().lateReplies) - seen(before) >= 3, 5000, 'the late replies reconciled');
    const after = engine.counters().lateReplies;
    assert.equal(after.agreed - before.agreed, 3, `Redis decided the same, delays included: ${JSON.stringify(after)}`);
    assert.equal(engine.health().mode, 'redis', 'the breaker stayed closed');
  } finally {
    await memory.close();
  }
});
