// An idle instance returns from the fallback by itself (docs/resilience.md,
// "Deadline and breaker"): the breaker's own probe, sent once the reset
// timeout passes with no request coming, finds the store back and closes it.
// Over the fake shared store: the point is the breaker's logic.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRule } from '../../../src/policies/rule.js';
import { planFor } from '../../../src/limiter/engine/plan.js';
import { FakeSharedStore } from '../../helpers/fake-shared-store.js';
import { chainOver, decideOn, eventually } from '../../helpers/resilient-engine.js';

test('a store back while no request comes: the breaker probes by itself and closes, on its first probe', { timeout: 20_000 }, async () => {
  const store = new FakeSharedStore();
  const chain = chainOver(store, {
    deadlineMs: 10,
    breaker: { failureThreshold: 1, errorThresholdPercentage: 50, volumeThreshold: 1000, rollingWindowMs: 1000, resetTimeoutMs: 200, silenceMs: 30 },
  });
  const plan = planFor({ tag: 'shop', name: 'orders' }, parseRule({ policy: 'token_bucket', capacity: 10, refillPerSecond: 1 }), 1);
  try {
    store.pause();
    await eventually(async () => {
      await decideOn(chain, plan, 1);
      return chain.breaker.opened;
    }, 5000, 'breaker open');
    store.resume();
    const probes = () => store.callsOn.get('rl:{~probe}:breaker') ?? 0;
    const probesAtResume = probes(); // the probes held while paused ran on resume
    await eventually(() => chain.breaker.closed, 5000, 'the breaker closed with no request');
    assert.equal(probes() - probesAtResume, 1, `one probe: the first after the reset timeout found the store back (${probes() - probesAtResume})`);
  } finally {
    chain.breaker.shutdown();
    await chain.fallback.close();
    await store.close();
  }
});
