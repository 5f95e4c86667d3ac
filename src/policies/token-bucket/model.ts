// Token bucket: `capacity` tokens at most, refilled at `refillPerSecond`.
// The state is a pair (tokens, last update), kept as integers so that
// TypeScript, Lua and Redis agree to the last digit: the tokens MISSING from a
// full bucket, in millionths (a same-instant burst then adds whole tokens
// exactly, with no rounding drift), and the µs of the last update. Keeping the
// deficit rather than the tokens means a raised capacity applies at once.
import { ceilMs, type PolicyModel, scaledUnits, toMicros } from '../model.js';
import type { TokenBucketRule } from './rule.js';

export interface TokenBucketState {
  /** Tokens missing from a full bucket after the last update, in millionths of a token. */
  deficit: number;
  /** Microsecond of the last update. */
  ts: number;
}

/** Millionths of a token per token. Refill removes `refillPerSecond` millionths of deficit per µs. */
const SCALE = 1_000_000;

export const tokenBucket: PolicyModel<TokenBucketRule, TokenBucketState> = {
  policy: 'token_bucket',

  step(state, now, rule, cost) {
    const nowUs = toMicros(now);
    const rate = rule.refillPerSecond; // millionths of a token per µs
    const full = rule.capacity * SCALE;
    let deficit = 0;
    if (state !== undefined) {
      const elapsed = Math.max(0, nowUs - state.ts);
      // A lowered capacity: never more missing than the whole bucket.
      deficit = Math.max(0, Math.min(full, state.deficit) - Math.floor(elapsed * rate + 0.5));
    }
    const want = cost === 0 ? 1 : cost;
    const allowed = full - deficit >= want * SCALE;

    if (!allowed || cost === 0) {
      return {
        state: state ?? { deficit, ts: nowUs },
        write: false,
        ttlMs: ceilMs(deficit / rate),
        decision: {
          allowed,
          remaining: Math.floor((full - deficit) / SCALE),
          limit: rule.capacity,
          resetAfterMs: ceilMs(deficit / rate),
          retryAfterMs: allowed ? 0 : ceilMs((want * SCALE - (full - deficit)) / rate),
          delayMs: 0,
        },
      };
    }
    const after = deficit + cost * SCALE;
    return {
      state: { deficit: after, ts: nowUs },
      write: true,
      ttlMs: Math.max(1, ceilMs(after / rate)),
      decision: {
        allowed: true,
        remaining: Math.floor((full - after) / SCALE),
        limit: rule.capacity,
        resetAfterMs: ceilMs(after / rate),
        retryAfterMs: 0,
        delayMs: 0,
      },
    };
  },

  adjust(state, now, rule, delta) {
    const nowUs = toMicros(now);
    const rate = rule.refillPerSecond;
    const full = rule.capacity * SCALE;
    // Everything missing, a debt included: a debt is kept as a full deficit whose refill starts at a later ts.
    let total = 0;
    if (state !== undefined) {
      const missing = Math.min(full, state.deficit);
      total = state.ts > nowUs ? missing + Math.floor((state.ts - nowUs) * rate + 0.5) : Math.max(0, missing - Math.floor((nowUs - state.ts) * rate + 0.5));
    }
    total = Math.max(0, total + delta * SCALE);
    const next = total > full ? { deficit: full, ts: nowUs + Math.ceil((total - full) / rate) } : { deficit: total, ts: nowUs };
    return { state: next, ttlMs: Math.max(1, ceilMs(next.ts - nowUs + next.deficit / rate)) };
  },

  fromReset(now, resetAfterMs, rule) {
    const deficit = Math.floor(resetAfterMs * 1000 * rule.refillPerSecond + 0.5);
    return { deficit: Math.min(rule.capacity * SCALE, deficit), ts: toMicros(now) };
  },
  unitMs: (rule) => 1000 / rule.refillPerSecond,

  serialize: (state) => `${state.deficit}:${state.ts}`,
  deserialize: (text) => {
    const [deficit, ts] = text.split(':');
    return { deficit: Number(deficit), ts: Number(ts) };
  },
  luaArgs: (rule) => [rule.capacity, rule.refillPerSecond],
  fillMs: (rule) => (rule.capacity / rule.refillPerSecond) * 1000,
  scale: (rule, factor) => ({ ...rule, capacity: scaledUnits(rule.capacity, factor), refillPerSecond: rule.refillPerSecond * factor }),
};
