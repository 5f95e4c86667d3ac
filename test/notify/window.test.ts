// Which thresholds a decision reached, and the window an event is
// deduplicated by, for each policy.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision } from '../../src/core/decision.js';
import { parseRule } from '../../src/policies/rule.js';
import { MIN_ROLLING_SLOT_MS, reachedIndex, windowOf } from '../../src/notify/window.js';

const decision = (limit: number, remaining: number, extra: Partial<Decision> = {}): Decision => ({ allowed: true, remaining, limit, resetAfterMs: 0, retryAfterMs: 0, delayMs: 0, source: 'redis', ...extra });
const AT = [0.8, 1];

describe('reachedIndex', () => {
  it('reaches 0.8 when 80 % is consumed, not before', () => {
    assert.equal(reachedIndex(AT, decision(5, 2)), -1); // 60 %
    assert.equal(reachedIndex(AT, decision(5, 1)), 0); // 80 %, exactly
    assert.equal(reachedIndex(AT, decision(10, 2)), 0);
    assert.equal(reachedIndex(AT, decision(10, 3)), -1);
    assert.equal(reachedIndex([0.3, 0.7], decision(10, 7)), 0); // 0.3: float division must not miss it
  });

  it('reaches 1.0 when the limit is exhausted or the request refused', () => {
    assert.equal(reachedIndex(AT, decision(5, 0)), 1);
    assert.equal(reachedIndex(AT, decision(100, 40, { allowed: false })), 1);
    assert.equal(reachedIndex([0.5], decision(100, 90, { allowed: false })), 0);
  });
});

describe('windowOf', () => {
  const now = Date.UTC(2026, 0, 1, 12, 0, 30, 250);

  it('fixed window: the aligned window holding the decision, the same for every request in it', () => {
    const rule = parseRule({ policy: 'fixed_window', limit: 10, windowMs: 60_000 }, 'rule');
    const early = windowOf(rule, decision(10, 2, { resetAfterMs: 29_750 }), now);
    const later = windowOf(rule, decision(10, 1, { resetAfterMs: 9_750 + 3 }), now + 20_000); // a store clock 3 ms ahead
    assert.equal(early.start, Date.UTC(2026, 0, 1, 12, 0, 0));
    assert.equal(later.start, early.start);
    assert.equal(early.resetAt, Date.UTC(2026, 0, 1, 12, 1, 0));
    assert.equal(early.ttlMs, 29_750);
    const next = windowOf(rule, decision(10, 1, { resetAfterMs: 59_000 }), Date.UTC(2026, 0, 1, 12, 1, 1));
    assert.equal(next.start, Date.UTC(2026, 0, 1, 12, 1, 0));
  });

  it('fixed window with offsetMs: windows start at the offset', () => {
    const rule = parseRule({ policy: 'fixed_window', limit: 10, windowMs: 3_600_000, offsetMs: 600_000 }, 'rule');
    const window = windowOf(rule, decision(10, 1, { resetAfterMs: Date.UTC(2026, 0, 1, 12, 10) - now }), now);
    assert.equal(window.start, Date.UTC(2026, 0, 1, 11, 10));
  });

  it('calendar quota: the calendar window (a day in the tenant time zone)', () => {
    const rule = parseRule({ policy: 'fixed_window', limit: 10, calendar: { unit: 'day', timeZone: 'Europe/Paris' } }, 'rule');
    const end = Date.UTC(2026, 0, 1, 23, 0); // midnight in Paris
    const window = windowOf(rule, decision(10, 1, { resetAfterMs: end - now }), now);
    assert.deepEqual([window.start, window.resetAt], [Date.UTC(2025, 11, 31, 23, 0), end]);
  });

  it('first_request window: named by its end, to the second', () => {
    const rule = parseRule({ policy: 'fixed_window', limit: 10, windowMs: 10_000, windowStart: 'first_request' }, 'rule');
    const a = windowOf(rule, decision(10, 1, { resetAfterMs: 4_000 }), now);
    const b = windowOf(rule, decision(10, 0, { resetAfterMs: 2_000 }), now + 2_000);
    assert.equal(a.start, b.start);
  });

  it('token bucket: slots as long as the bucket takes to fill, at least a minute', () => {
    const fast = parseRule({ policy: 'token_bucket', capacity: 20, refillPerSecond: 10 }, 'rule');
    const window = windowOf(fast, decision(20, 2, { resetAfterMs: 1_800 }), now);
    assert.equal(window.start, Math.floor(now / MIN_ROLLING_SLOT_MS) * MIN_ROLLING_SLOT_MS);
    assert.equal(window.resetAt, now + 1_800);
    assert.equal(windowOf(fast, decision(20, 2), now + MIN_ROLLING_SLOT_MS).start, window.start + MIN_ROLLING_SLOT_MS);
    const slow = parseRule({ policy: 'gcra', capacity: 3600, refillPerSecond: 1 }, 'rule');
    assert.equal(windowOf(slow, decision(3600, 10), now).start, Math.floor(now / 3_600_000) * 3_600_000);
  });

  it('sliding windows and the leaky bucket: slots of the window, or of the time to drain', () => {
    const sliding = parseRule({ policy: 'sliding_window_counter', limit: 100, windowMs: 600_000 }, 'rule');
    assert.equal(windowOf(sliding, decision(100, 5), now).start, Math.floor(now / 600_000) * 600_000);
    const log = parseRule({ policy: 'sliding_window_log', limit: 100, windowMs: 120_000 }, 'rule');
    assert.equal(windowOf(log, decision(100, 5), now).ttlMs, 120_000 - (now % 120_000));
    const leaky = parseRule({ policy: 'leaky_bucket', ratePerSecond: 1, burst: 299 }, 'rule');
    assert.equal(windowOf(leaky, decision(300, 5), now).start, Math.floor(now / 300_000) * 300_000);
  });
});
