// A store that answers late while the breaker stays closed: the fallback
// decides from the last state the store reported for the key, for every
// policy with a state to carry (a shaped leaky bucket keeps its delays), and a
// late reply whose delay differs from the local one counts as a disagreement.
// Over the fake shared store (test/helpers/fake-shared-store.ts): the point is
// the limiter's logic, not Redis; test/limiter/fallback/shaping-fallback-redis.sys.test.ts
// is the same burst on a real, paused redis-server.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Decision } from '../../../src/core/decision.js';
import { parseRule, type Rule } from '../../../src/policies/rule.js';
import { planFor } from '../../../src/limiter/engine/plan.js';
import type { DecisionChain } from '../../../src/limiter/engine/resilient-engine.js';
import { MemoryStore } from '../../../src/stores/memory-store.js';
import { FakeSharedStore } from '../../helpers/fake-shared-store.js';
import { chainOver, decideAllOn, decideOn, eventually } from '../../helpers/resilient-engine.js';

const bounded = { timeout: 20_000 };

/** A chain whose breaker a short pause never opens (silence 5 s): every miss is a late reply, the breaker closed. */
function chainOverFake(store: FakeSharedStore): DecisionChain {
  return chainOver(store, {
    deadlineMs: 20,
    breaker: { failureThreshold: 1000, errorThresholdPercentage: 100, volumeThreshold: 1000, rollingWindowMs: 1000, resetTimeoutMs: 500, silenceMs: 5000 },
  });
}

const shaped = parseRule({ policy: 'leaky_bucket', ratePerSecond: 2, burst: 10, delay: 4 });

/** `n` decisions sent at once while the store is paused, answered by the fallback; the store resumes after. */
async function duringPause(store: FakeSharedStore, chain: DecisionChain, rule: Rule, n: number, route = 'orders'): Promise<Decision[]> {
  const plan = planFor({ tag: 'shop', name: route }, rule, 1);
  store.pause();
  try {
    return await Promise.all(Array.from({ length: n }, () => decideOn(chain, plan, 1)));
  } finally {
    store.resume();
  }
}

const lateTotal = (chain: DecisionChain) => Object.values(chain.stats.lateReplies).reduce((sum, n) => sum + n, 0);

test('a shaped burst while the store is late keeps the delays and the refusal it gets on memory', bounded, async () => {
  const store = new FakeSharedStore();
  const chain = chainOverFake(store);
  const memory = new MemoryStore();
  const plan = planFor({ tag: 'shop', name: 'orders' }, shaped, 1);
  try {
    // Nine queued: the next two wait their turn (2.5 s and 3 s with delay=4), the third finds the burst full.
    for (let i = 0; i < 9; i++) {
      assert.equal((await decideOn(chain, plan, 1)).source, 'redis');
      memory.consumeSync(plan.bucket.key, shaped, 1);
    }
    const onMemory = [0, 1, 2].map(() => memory.consumeSync(plan.bucket.key, shaped, 1));
    const late = await duringPause(store, chain, shaped, 3);
    assert.deepEqual(late.map((d) => d.source), ['fallback', 'fallback', 'fallback'], 'every call missed its deadline');
    assert.deepEqual(late.map((d) => d.allowed), onMemory.map((d) => d.allowed), 'admitted and refused as on memory');
    assert.deepEqual(onMemory.map((d) => d.allowed), [true, true, false]);
    late.forEach((d, i) => {
      // Generous: the fallback decided some ms after the memory twin, on a loaded machine maybe hundreds.
      assert.ok(Math.abs(d.delayMs - onMemory[i]!.delayMs) < 400, `request ${i}: delay ${d.delayMs} ms, on memory ${onMemory[i]!.delayMs} ms`);
    });
    await eventually(() => lateTotal(chain) >= 3, 5000, 'the late replies reconciled');
    assert.equal(chain.stats.lateReplies.agreed, 3, `the store decided the same: ${JSON.stringify(chain.stats.lateReplies)}`);
  } finally {
    chain.breaker.shutdown();
    await chain.fallback.close();
    await store.close();
  }
});

test("a late reply whose delay differs from the fallback's is counted as a disagreement, not as agreed", bounded, async () => {
  const store = new FakeSharedStore();
  const chain = chainOverFake(store);
  const other = chainOverFake(store); // another instance: its requests fill the queue unseen by this one
  const plan = planFor({ tag: 'shop', name: 'queue' }, shaped, 1);
  try {
    assert.equal((await decideOn(chain, plan, 1)).delayMs, 0, 'an empty queue: served at once');
    for (let i = 0; i < 7; i++) await decideOn(other, plan, 1);
    const [late] = await duringPause(store, chain, shaped, 1, 'queue');
    assert.deepEqual([late!.source, late!.allowed, late!.delayMs], ['fallback', true, 0], 'the last word this instance saw: nothing queued to wait behind');
    await eventually(() => lateTotal(chain) >= 1, 5000, 'the late reply reconciled');
    assert.equal(chain.stats.lateReplies.agreed, 0, `the store queued it behind 8 (a 2 s delay): ${JSON.stringify(chain.stats.lateReplies)}`);
    assert.equal(chain.stats.lateReplies.delay_mismatch, 1);
  } finally {
    for (const c of [chain, other]) {
      c.breaker.shutdown();
      await c.fallback.close();
    }
    await store.close();
  }
});

test('a fixed window while the store is late is held to what the store last said was left', bounded, async () => {
  const store = new FakeSharedStore();
  const chain = chainOverFake(store);
  // The window opens now (its grid shifted to this instant), so no boundary falls inside the test and
  // resets the count under it (on the plain UTC grid, a run across a minute's turn saw 10 left again).
  const rule = parseRule({ policy: 'fixed_window', limit: 10, windowMs: 60_000, offsetMs: Date.now() % 60_000 });
  const plan = planFor({ tag: 'shop', name: 'window' }, rule, 1);
  try {
    for (let i = 0; i < 8; i++) assert.equal((await decideOn(chain, plan, 1)).allowed, true);
    const late = await duringPause(store, chain, rule, 4, 'window');
    assert.deepEqual(late.map((d) => d.source), ['fallback', 'fallback', 'fallback', 'fallback']);
    assert.deepEqual(late.map((d) => d.allowed), [true, true, false, false], '2 of 10 were left');
    await eventually(() => lateTotal(chain) >= 4, 5000, 'the late replies reconciled');
    assert.equal(chain.stats.lateReplies.agreed, 4, JSON.stringify(chain.stats.lateReplies));
  } finally {
    chain.breaker.shutdown();
    await chain.fallback.close();
    await store.close();
  }
});



test('several limits decided together: a late reply with another delay for the shaped one is a disagreement too', bounded, async () => {
  const store = new FakeSharedStore();
  const chain = chainOverFake(store);
  const other = chainOverFake(store);
  const plans = [planFor({ tag: 'shop', name: 'multi-shaped' }, shaped, 1), planFor({ tag: 'shop', name: 'multi-bucket' }, parseRule({ policy: 'token_bucket', capacity: 100, refillPerSecond: 1 }), 1)];
  try {
    assert.equal((await decideAllOn(chain, plans, [1, 1])).admitted, true);
    for (let i = 0; i < 7; i++) await decideOn(other, plans[0]!, 1);
    store.pause();
    let late: Awaited<ReturnType<DecisionChain['decide']>>;
    try {
      late = await decideAllOn(chain, plans, [1, 1]);
    } finally {
      store.resume();
    }
    assert.deepEqual([late.admitted, late.decisions[0]!.source, late.decisions[0]!.delayMs], [true, 'fallback', 0]);
    await eventually(() => lateTotal(chain) >= 2, 5000, 'the late replies reconciled');
    assert.equal(chain.stats.lateReplies.delay_mismatch, 1, JSON.stringify(chain.stats.lateReplies));
    assert.equal(chain.stats.lateReplies.agreed, 1, 'the token bucket agreed');
  } finally {
    for (const c of [chain, other]) {
      c.breaker.shutdown();
      await c.fallback.close();
    }
    await store.close();
  }
});
