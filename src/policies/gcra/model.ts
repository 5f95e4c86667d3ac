// GCRA, the generic cell rate algorithm (ATM, then Stripe and Shopify limits).
// One stored integer: the TAT, the theoretical arrival time (µs) at which the
// flow is back in step with its rate. A request of `cost` units pushes the TAT
// by `cost` emission intervals and conforms iff the pushed TAT stays within the
// tolerance (`capacity` intervals) ahead of now.
import { ceilMs, floorUnits, type PolicyModel, toMicros } from '../model.js';

export interface GcraState {
  /** Theoretical arrival time, in microseconds. */
  tat: number;
}

export const gcra: PolicyModel<'gcra', GcraState> = {
  policy: 'gcra',

  step(state, now, rule, cost) {
    const nowUs = toMicros(now);
    const interval = 1_000_000 / rule.refillPerSecond; // emission interval T, µs per unit
    const tolerance = rule.capacity * interval; // how far the TAT may run ahead of now
    const tat = Math.max(state?.tat ?? nowUs, nowUs); // a TAT in the past is "now"
    const ahead = tat - nowUs; // exact integer: work time with small, precise numbers
    const want = cost === 0 ? 1 : cost;
    const excess = ahead + want * interval - tolerance; // > 0: the new TAT would overshoot
    const conforms = excess <= 1; // 1 µs slack absorbs the flooring of the TAT
    const left = (aheadNow: number) => floorUnits((tolerance - aheadNow) / interval);

    if (!conforms || cost === 0) {
      return {
        state: { tat },
        write: false,
        ttlMs: ceilMs(ahead),
        decision: {
          allowed: conforms,
          remaining: left(ahead),
          limit: rule.capacity,
          resetAfterMs: ceilMs(ahead),
          retryAfterMs: conforms ? 0 : ceilMs(excess),
          delayMs: 0,
        },
      };
    }
    // Floored, not rounded: a rounded TAT drifts up by up to 0.5 µs per call and
    // a burst of `capacity` calls at one instant would then refuse its last one.
    const aheadAfter = Math.floor(ahead + cost * interval);
    return {
      state: { tat: nowUs + aheadAfter },
      write: true,
      ttlMs: Math.max(1, ceilMs(aheadAfter)),
      decision: {
        allowed: true,
        remaining: left(aheadAfter),
        limit: rule.capacity,
        resetAfterMs: ceilMs(aheadAfter),
        retryAfterMs: 0,
        delayMs: 0,
      },
    };
  },

  serialize: (state) => String(state.tat),
  deserialize: (text) => ({ tat: Number(text) }),
  luaArgs: (rule) => [rule.capacity, rule.refillPerSecond],
};
