// GCRA, the generic cell rate algorithm (ATM, then Stripe and Shopify limits).
// The state is the TAT, the theoretical arrival time at which the flow is back
// in step with its rate. A request of `cost` units pushes the TAT by `cost`
// emission intervals T and conforms iff the pushed TAT stays within the
// tolerance (`capacity` intervals) ahead of now.
//
// The TAT is kept as `anchor + units * T`: the microsecond the flow was last
// idle and the units admitted since. A TAT rounded to whole µs on every call
// drifts by up to 1 µs per call whenever T is fractional (rate 6/s: 166666.67 µs),
// enough to refuse the last unit of a full burst or admit one unit too many.
import { ceilMs, floorUnits, type PolicyModel, toMicros } from '../model.js';

export interface GcraState {
  /** Microsecond at which the flow was last idle (its TAT was in the past). */
  anchor: number;
  /** Units admitted since then: TAT = anchor + units * T. */
  units: number;
}

/** Below this (µs) the TAT counts as reached: float noise, not credit. */
const IDLE_EPSILON = 1e-6;

export const gcra: PolicyModel<'gcra', GcraState> = {
  policy: 'gcra',

  step(state, now, rule, cost) {
    const nowUs = toMicros(now);
    const interval = 1_000_000 / rule.refillPerSecond; // emission interval T, µs per unit
    const tolerance = rule.capacity * interval; // how far the TAT may run ahead of now
    let flow = state ?? { anchor: nowUs, units: 0 };
    let ahead = flow.anchor - nowUs + flow.units * interval; // TAT - now, in small precise numbers
    if (!(ahead > IDLE_EPSILON)) {
      flow = { anchor: nowUs, units: 0 }; // a TAT in the past is now
      ahead = 0;
    }
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
    const next = { anchor: flow.anchor, units: flow.units + cost };
    const aheadAfter = next.anchor - nowUs + next.units * interval;
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

  fromReset(now, resetAfterMs) {
    // TAT = anchor + units * T: a TAT `resetAfterMs` ahead with no units counted since.
    return { anchor: toMicros(now + resetAfterMs), units: 0 };
  },

  serialize: (state) => `${state.anchor}:${state.units}`,
  deserialize(text) {
    const [anchor, units] = text.split(':').map(Number);
    return { anchor: anchor ?? 0, units: units ?? 0 };
  },
  luaArgs: (rule) => [rule.capacity, rule.refillPerSecond],
};
