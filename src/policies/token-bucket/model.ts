// Token bucket (design section 3): `capacity` tokens at most, refilled at
// `refillPerSecond`. Stored as ONE integer, the microsecond at which the bucket
// is full again: tokens(now) = capacity - (fullAt - now) * rate. One integer
// lets Redis keep the value inline (about half the memory of the design's
// two-field hash) and an idle bucket's key simply expires when it is full.
import type { TokenBucketRule } from '../../core/rule.js';
import { ceilMs, floorUnits, type PolicyModel, toMicros } from '../model.js';

export interface TokenBucketState {
  /** Microsecond timestamp at which the bucket holds `capacity` tokens again. */
  fullAt: number;
}

export const tokenBucket: PolicyModel<'token_bucket', TokenBucketState> = {
  policy: 'token_bucket',

  step(state, now, rule, cost) {
    const nowUs = toMicros(now);
    const perToken = 1_000_000 / rule.refillPerSecond; // microseconds to refill one token
    const fullAt = Math.max(state?.fullAt ?? nowUs, nowUs);
    const deficit = fullAt - nowUs; // microseconds of missing tokens
    const window = rule.capacity * perToken; // deficit of an empty bucket
    const want = cost === 0 ? 1 : cost;
    const needed = deficit + want * perToken - window; // > 0: not enough tokens
    const allowed = needed <= 1; // 1 µs slack absorbs the rounding of fullAt
    const tokensLeft = (deficitAfter: number) => floorUnits(rule.capacity - (deficitAfter * rule.refillPerSecond) / 1_000_000);

    if (!allowed || cost === 0) {
      return {
        state: { fullAt },
        write: false,
        ttlMs: ceilMs(deficit),
        decision: {
          allowed,
          remaining: tokensLeft(deficit),
          limit: rule.capacity,
          resetAfterMs: ceilMs(deficit),
          retryAfterMs: allowed ? 0 : ceilMs(needed),
          delayMs: 0,
        },
      };
    }
    const newFullAt = Math.floor(fullAt + cost * perToken + 0.5); // same rounding as the Lua twin
    const deficitAfter = newFullAt - nowUs;
    return {
      state: { fullAt: newFullAt },
      write: true,
      ttlMs: Math.max(1, ceilMs(deficitAfter)),
      decision: {
        allowed: true,
        remaining: tokensLeft(deficitAfter),
        limit: rule.capacity,
        resetAfterMs: ceilMs(deficitAfter),
        retryAfterMs: 0,
        delayMs: 0,
      },
    };
  },

  serialize: (state) => String(state.fullAt),
  deserialize: (text) => ({ fullAt: Number(text) }),
  luaArgs: (rule) => [rule.capacity, rule.refillPerSecond],
};
