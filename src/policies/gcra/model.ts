// GCRA, the generic cell rate algorithm (ATM, then Stripe and Shopify limits).
// The state is the TAT, the theoretical arrival time at which the flow is back
// in step with its rate. A request of `cost` units pushes the TAT by `cost`
// emission intervals T and conforms iff the pushed TAT stays within the
// tolerance (`capacity` intervals) ahead of now.
// The TAT is kept as `anchor + units * T` (../tat.ts explains why).
import { ceilMs, floorUnits, type PolicyModel, scaledUnits, toMicros } from '../model.js';
import { adjustTat, advanceTat, deserializeTat, serializeTat, type TatState, tatAt } from '../tat.js';
import type { GcraRule } from './rule.js';

export type GcraState = TatState;

export const gcra: PolicyModel<GcraRule, GcraState> = {
  policy: 'gcra',

  step(state, now, rule, cost) {
    const nowUs = toMicros(now);
    const interval = 1_000_000 / rule.refillPerSecond; // emission interval T, µs per unit
    const tolerance = rule.capacity * interval; // how far the TAT may run ahead of now
    const { flow, ahead } = tatAt(state, nowUs, interval); // ahead = TAT - now, µs
    const want = cost === 0 ? 1 : cost;
    const excess = ahead + want * interval - tolerance; // > 0: the new TAT would overshoot
    const conforms = excess <= 1; // 1 µs slack: float noise and the µs clock
    const left = (aheadNow: number) => floorUnits((tolerance - aheadNow) / interval);

    if (!conforms || cost === 0) {
      return {
        state: flow,
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
    const { flow: next, ahead: aheadAfter } = advanceTat(flow, cost, nowUs, interval);
    return {
      state: next,
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

  adjust(state, now, rule, delta) {
    const nowUs = toMicros(now);
    const { flow, ahead } = adjustTat(state, delta, nowUs, 1_000_000 / rule.refillPerSecond);
    return { state: flow, ttlMs: Math.max(1, ceilMs(ahead)) };
  },

  fromReset(now, resetAfterMs) {
    // TAT = anchor + units * T: a TAT `resetAfterMs` ahead with no units counted since.
    return { anchor: toMicros(now + resetAfterMs), units: 0 };
  },
  unitMs: (rule) => 1000 / rule.refillPerSecond,

  serialize: serializeTat,
  deserialize: deserializeTat,
  luaArgs: (rule) => [rule.capacity, rule.refillPerSecond],
  fillMs: (rule) => (rule.capacity / rule.refillPerSecond) * 1000,
  scale: (rule, factor) => ({ ...rule, capacity: scaledUnits(rule.capacity, factor), refillPerSecond: rule.refillPerSecond * factor }),
};
