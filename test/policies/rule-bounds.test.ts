// Rule bounds: every rule parseRule accepts is one every store can hold (a
// finite TTL on Redis, exact integers in the state) and every header can carry
// (integers within 15 digits). Each bound is refused naming its field; the
// extreme allowed values are accepted; the header code clamps whatever it gets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision } from '../../src/core/decision.js';
import { isSluiceError } from '../../src/core/errors.js';
import { pushLimitHeaders, rejection, windowSeconds } from '../../src/http/headers.js';
import { createLimiter } from '../../src/limiter/engine/create-limiter.js';
import { MAX_WINDOW_MS, parseRule, type Rule } from '../../src/policies/rule.js';

const YEAR_S = MAX_WINDOW_MS / 1000; // 366 days

function refusal(input: object): { field: string | undefined; message: string } {
  try {
    parseRule(input, 'rule');
  } catch (error) {
    assert.ok(isSluiceError(error), String(error));
    return { field: error.field, message: error.message };
  }
  assert.fail(`accepted ${JSON.stringify(input)}`);
}

const tb = { policy: 'token_bucket', capacity: 5, refillPerSecond: 1 };
const gcra = { policy: 'gcra', capacity: 5, refillPerSecond: 1 };
const fixed = { policy: 'fixed_window', limit: 5, windowMs: 1000 };
const log = { policy: 'sliding_window_log', limit: 5, windowMs: 1000 };
const counter = { policy: 'sliding_window_counter', limit: 5, windowMs: 1000 };
const leaky = { policy: 'leaky_bucket', ratePerSecond: 1, burst: 5 };

// [policy case, rule, field, message]
const refused: [string, object, string, RegExp][] = [
  ['fixed_window: offsetMs not under windowMs', { ...fixed, offsetMs: 1000 }, 'rule.offsetMs', /less than windowMs \(1000\)/],
  ['fixed_window: negative offsetMs', { ...fixed, offsetMs: -1 }, 'rule.offsetMs', /at least 0/],
  ['fixed_window: offsetMs with windowStart first_request', { ...fixed, windowStart: 'first_request', offsetMs: 5 }, 'rule.offsetMs', /aligned windows only/],
  ['fixed_window: unknown windowStart', { ...fixed, windowStart: 'midnight' }, 'rule.windowStart', /./],
  ['token_bucket: refill 1e-300/s', { ...tb, refillPerSecond: 1e-300 }, 'rule.refillPerSecond', /366 days/],
  ['token_bucket: capacity 1e9 at 1e-6/s', { ...tb, capacity: 1e9, refillPerSecond: 1e-6 }, 'rule.refillPerSecond', /at least 31\.63/],
  ['token_bucket: capacity over 1e9', { ...tb, capacity: 1e9 + 1 }, 'rule.capacity', /at most 1000000000/],
  ['token_bucket: refill over 1e9/s', { ...tb, refillPerSecond: 1e9 + 1 }, 'rule.refillPerSecond', /at most/],
  ['token_bucket: refill infinite', { ...tb, refillPerSecond: Number.POSITIVE_INFINITY }, 'rule.refillPerSecond', /./],
  ['gcra: refill 1e-300/s', { ...gcra, refillPerSecond: 1e-300 }, 'rule.refillPerSecond', /366 days/],
  ['gcra: one unit a little over 366 days', { ...gcra, capacity: 1, refillPerSecond: 1 / (YEAR_S + 1) }, 'rule.refillPerSecond', /366 days/],
  ['gcra: capacity over 1e9', { ...gcra, capacity: 2e9 }, 'rule.capacity', /at most/],
  ['gcra: refill over 1e9/s', { ...gcra, refillPerSecond: 2e9 }, 'rule.refillPerSecond', /at most/],
  ['fixed_window: window over 366 days', { ...fixed, windowMs: MAX_WINDOW_MS + 1 }, 'rule.windowMs', /366 days/],
  ['fixed_window: limit over 1e9', { ...fixed, limit: 1e9 + 1 }, 'rule.limit', /at most/],
  ['fixed_window: fractional window', { ...fixed, windowMs: 1.5 }, 'rule.windowMs', /integer/],
  ['sliding_window_log: limit over 100000', { ...log, limit: 100_001 }, 'rule.limit', /at most 100000/],
  ['sliding_window_log: window over 366 days', { ...log, windowMs: 1e13 }, 'rule.windowMs', /at most/],
  ['sliding_window_counter: limit over 1e9', { ...counter, limit: 1e12 }, 'rule.limit', /at most/],
  ['sliding_window_counter: window over 366 days', { ...counter, windowMs: MAX_WINDOW_MS + 1 }, 'rule.windowMs', /at most/],
  ['leaky_bucket: rate 1e-300/s', { ...leaky, ratePerSecond: 1e-300 }, 'rule.ratePerSecond', /366 days/],
  ['leaky_bucket: a queue of 1e9 at 1/s', { ...leaky, burst: 999_999_999 }, 'rule.ratePerSecond', /\(burst \+ 1\)/],
  ['leaky_bucket: burst of 1e9 (1e9 + 1 queued)', { ...leaky, ratePerSecond: 1e9, burst: 1e9 }, 'rule.burst', /at most 999999999/],
  ['leaky_bucket: rate over 1e9/s', { ...leaky, ratePerSecond: 1e10 }, 'rule.ratePerSecond', /at most/],
  ['any policy: lease batch over 10000', { ...tb, lease: { batch: 10_001 } }, 'rule.lease.batch', /at most 10000/],
  ['any policy: over 256 shards', { ...counter, shards: 257 }, 'rule.shards', /at most 256/],
  ['any policy: a region share under 0.001', { ...fixed, regionShares: { eu: 0.0009 } }, 'rule.regionShares.eu', /at least 0\.001/],
];

// The extreme values each policy allows: the largest counts, the fastest and the slowest rates.
const extremes: object[] = [
  { ...tb, capacity: 1e9, refillPerSecond: 1e9 / YEAR_S },
  { ...tb, capacity: 1, refillPerSecond: 1e9 },
  { ...gcra, capacity: 1e9, refillPerSecond: 1e9 / YEAR_S },
  { ...gcra, capacity: 1, refillPerSecond: 1 / YEAR_S },
  { ...fixed, limit: 1e9, windowMs: MAX_WINDOW_MS },
  { ...log, limit: 100_000, windowMs: MAX_WINDOW_MS },
  { ...counter, limit: 1e9, windowMs: MAX_WINDOW_MS },
  { ...leaky, ratePerSecond: 1e9 / YEAR_S, burst: 1e9 - 1 },
  { ...leaky, ratePerSecond: 1e9, burst: 0, regionShares: { eu: 0.001 } },
];

describe('rule bounds', () => {
  for (const [name, input, field, message] of refused) {
    it(`refuses ${name}, naming ${field}`, () => {
      const error = refusal(input);
      assert.equal(error.field, field);
      assert.match(error.message, message);
    });
  }

  it('accepts the extreme allowed values of every policy', () => {
    for (const input of extremes) assert.doesNotThrow(() => parseRule(input), JSON.stringify(input));
  });

  it('the minimum rate a refusal quotes is itself accepted', () => {
    for (const input of [
      { ...tb, capacity: 7, refillPerSecond: 1e-300 },
      { ...gcra, capacity: 999_999_937, refillPerSecond: 1e-9 },
      { ...leaky, burst: 12_345, ratePerSecond: 1e-12 },
    ]) {
      const { field, message } = refusal(input);
      const least = Number(/at least ([\d.e+-]+)/.exec(message)?.[1]);
      const name = field!.replace('rule.', '');
      assert.doesNotThrow(() => parseRule({ ...input, [name]: least }), message);
    }
  });

  it('the library refuses an out-of-bounds rule with an error naming the field', () => {
    assert.throws(
      () => createLimiter({ policy: 'token_bucket', capacity: 5, refillPerSecond: 1e-300 }),
      (error: unknown) => isSluiceError(error) && error.field === 'rule.refillPerSecond' && /366 days/.test(error.message),
    );
  });
});

describe('limit headers', () => {
  const decision = (over: Partial<Decision>): Decision => ({
    allowed: true,
    remaining: 1,
    limit: 5,
    resetAfterMs: 1000,
    retryAfterMs: 0,
    delayMs: 0,
    source: 'memory',
    ...over,
  });
  const sfInteger = /^\d{1,15}$/;

  it('carry at most 15 digits and never an exponent, whatever the decision holds', () => {
    const rule = { policy: 'token_bucket', capacity: 5, refillPerSecond: 1e-300 } as Rule; // bypasses parseRule on purpose
    for (const huge of [1e300, Number.POSITIVE_INFINITY, Number.NaN, 1e16 + 1]) {
      const allowed = decision({ remaining: huge, limit: huge, resetAfterMs: huge });
      const refused = decision({ allowed: false, limit: huge, resetAfterMs: huge, retryAfterMs: huge });
      const out: string[] = [];
      pushLimitHeaders(out, allowed, 'r', rule, { ietf: true, problemJson: false });
      const { headers, body } = rejection(refused, 'r', rule, { ietf: true, problemJson: true });
      const all = [...out, ...headers];
      for (let i = 0; i < all.length; i += 2) {
        const [name, value] = [all[i]!, all[i + 1]!];
        if (name.startsWith('X-RateLimit') || name === 'Retry-After') assert.match(value, sfInteger, `${name}: ${value}`);
        if (name.startsWith('RateLimit')) for (const n of value.matchAll(/=([^;]*)/g)) assert.match(n[1]!, sfInteger, `${name}: ${value}`);
      }
      assert.match(String(JSON.parse(body).retryAfterMs), sfInteger);
    }
  });

  it('give the window of the slowest allowed bucket in 8 digits', () => {
    const rule = parseRule({ policy: 'token_bucket', capacity: 1e9, refillPerSecond: 1e9 / YEAR_S });
    assert.equal(windowSeconds(rule), YEAR_S);
  });
});
