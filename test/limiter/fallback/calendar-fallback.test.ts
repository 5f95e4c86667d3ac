// A calendar quota while the shared store is away: the local fallback decides
// the same calendar window by the instance's clock (its boundaries computed
// locally), so its reset is the real time to the window's turn, not NaN or a
// fixed length. Over the fake shared store, paused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { calendarWindowAt } from '../../../src/core/calendar.js';
import { parseRule } from '../../../src/policies/rule.js';
import { planFor } from '../../../src/limiter/engine/plan.js';
import { FakeSharedStore } from '../../helpers/fake-shared-store.js';
import { chainOver, decideOn } from '../../helpers/resilient-engine.js';

test('a monthly calendar quota decided by the fallback while the store is paused', { timeout: 20_000 }, async () => {
  const store = new FakeSharedStore();
  const chain = chainOver(store, {
    deadlineMs: 10,
    breaker: { failureThreshold: 1, errorThresholdPercentage: 50, volumeThreshold: 1000, rollingWindowMs: 1000, resetTimeoutMs: 60_000, silenceMs: 30 },
  });
  const spec = { unit: 'month', timeZone: 'America/New_York', anchor: 31 } as const;
  const plan = planFor({ tag: 'shop', name: 'orders' }, parseRule({ policy: 'fixed_window', limit: 3, calendar: spec }), 1);
  try {
    store.pause();
    const decision = await decideOn(chain, plan, 1);
    assert.equal(decision.source, 'fallback');
    assert.equal(decision.allowed, true);
    const untilTurn = calendarWindowAt(Date.now(), spec).end - Date.now();
    assert.ok(Math.abs(decision.resetAfterMs - untilTurn) < 1000, `reset ${decision.resetAfterMs} ms vs ${untilTurn} ms to the billing day in New York`);
  } finally {
    store.resume();
    chain.breaker.shutdown();
    await chain.fallback.close();
    await store.close();
  }
});
