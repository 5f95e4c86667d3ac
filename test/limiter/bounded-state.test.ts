// Per-key state stays bounded whatever the number of distinct keys (counted
// in entries, not bytes): a flood of fresh API keys must not grow the process
// (docs/limits.md#memory-under-many-clients).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRule } from '../../src/policies/rule.js';
import { IDLE_KEPT, InFlight } from '../../src/limiter/deadline/guard.js';
import { MAX_PLANS, PlanCache } from '../../src/limiter/engine/plan.js';
import { FallbackLimiter } from '../../src/limiter/fallback/fallback.js';

const KEYS = 30_000;
const rule = parseRule({ policy: 'token_bucket', capacity: 10, refillPerSecond: 1 });
const shaped = parseRule({ policy: 'leaky_bucket', ratePerSecond: 2, burst: 10, delay: 4 });

test('the fallback keeps at most its bounds of buckets, last words, episode marks and debts after many distinct keys', () => {
  let now = 1_000_000;
  const fallback = new FallbackLimiter({ maxKeys: 500, stateCacheSize: 300, now: () => now });
  for (let i = 0; i < KEYS; i++) {
    const key = `fresh-${i}`;
    const policy = i % 2 === 0 ? rule : shaped;
    fallback.remember(key, key, policy, { remaining: 5, resetAfterMs: 2000 }, 1);
    fallback.decide({ key, rule: policy, cost: 1, shadow: false, pendingMs: 0 }, { breakerOpen: i % 3 === 0 }); // breaker closed (a debt) or open (an episode mark)
    now += 1;
  }
  const sizes = fallback.sizes();
  assert.ok(sizes.buckets <= 500, `buckets ${sizes.buckets}`);
  assert.ok(sizes.started <= 500, `started ${sizes.started}`);
  assert.ok(sizes.lastStates <= 300, `last states ${sizes.lastStates}`);
  assert.ok(sizes.debts <= 300, `debts ${sizes.debts}`);
  assert.ok(sizes.buckets > 0 && sizes.lastStates > 0, 'something was kept (the bound is reached, not avoided)');
});

test('the plan cache keeps at most MAX_PLANS plans after many distinct tenants', () => {
  const plans = new PlanCache();
  for (let i = 0; i < KEYS; i++) plans.plan({ tag: `tenant-${i}`, name: 'orders' }, rule, 1);
  assert.ok(plans.plans <= MAX_PLANS, `${plans.plans} plans`);
  assert.ok(plans.plans > 0);
});

test('in-flight bookkeeping counts no bucket once its calls are answered, and keeps at most IDLE_KEPT idle ones', () => {
  const inFlight = new InFlight();
  for (let i = 0; i < KEYS; i++) {
    inFlight.take(`fresh-${i}`, 1);
    if (i > 0) inFlight.release(`fresh-${i - 1}`, 1);
  }
  assert.equal(inFlight.size, 1, 'only the call still unanswered');
  assert.ok(inFlight.kept <= IDLE_KEPT + 1, `${inFlight.kept} buckets kept`);
  inFlight.release(`fresh-${KEYS - 1}`, 1);
  assert.equal(inFlight.size, 0);
  assert.equal(inFlight.pending(`fresh-${KEYS - 1}`), 0);
});
