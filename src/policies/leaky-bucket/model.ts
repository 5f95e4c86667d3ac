// Leaky bucket as a traffic shaper, like nginx `limit_req`: requests leave the
// bucket at `ratePerSecond`; up to `burst` may wait their turn beyond the one
// being served, anything more is refused. Accepted requests are told how long
// to wait (delayMs): none with `nodelay`, none for the first `delay` queued
// ones with `delay=N`, and by default everyone behind the first waits.
// The state is the microsecond at which the queue is empty (a GCRA TAT), kept
// as `anchor + units * interval` for the reason given in ../tat.ts; the
// level at `now` is (emptyAt - now) / interval requests.
import { ceilMs, floorUnits, type PolicyModel, scaledUnits, toMicros } from '../model.js';
import { adjustTat, advanceTat, deserializeTat, serializeTat, type TatState, tatAt } from '../tat.js';
import type { LeakyBucketRule } from './rule.js';

/** The queue is empty again at anchor + units * interval. */
export type LeakyBucketState = TatState;

/** Queued requests served without delay (nginx `delay=N`; `nodelay`, or a delay at or above the burst, = the whole burst). */
const undelayed = (rule: LeakyBucketRule): number => (rule.nodelay ? rule.burst : Math.min(rule.delay ?? 0, rule.burst));

export const leakyBucket: PolicyModel<LeakyBucketRule, LeakyBucketState> = {
  policy: 'leaky_bucket',

  step(state, now, rule, cost) {
    const nowUs = toMicros(now);
    const interval = 1_000_000 / rule.ratePerSecond; // µs for one request to leak out
    const { flow: queue, ahead } = tatAt(state, nowUs, interval); // queue ahead of this request, in µs
    const want = cost === 0 ? 1 : cost;
    // Its last unit would find ahead/interval + want - 1 requests in front; at most `burst` may wait.
    const overflow = ahead + (want - 1) * interval - rule.burst * interval;
    const fits = overflow <= 1; // 1 µs slack: float noise and the µs clock
    const delayUs = ahead + (want - 1) * interval - undelayed(rule) * interval;
    const delayMs = fits && delayUs > 1 ? ceilMs(delayUs) : 0;
    const room = (aheadNow: number) => floorUnits(rule.burst + 1 - aheadNow / interval);

    if (!fits || cost === 0) {
      return {
        state: queue,
        write: false,
        ttlMs: ceilMs(ahead),
        decision: {
          allowed: fits,
          remaining: room(ahead),
          limit: rule.burst + 1,
          resetAfterMs: ceilMs(ahead),
          retryAfterMs: fits ? 0 : ceilMs(overflow),
          delayMs, // a peek tells the delay one request would get
        },
      };
    }
    const { flow: next, ahead: aheadAfter } = advanceTat(queue, cost, nowUs, interval);
    return {
      state: next,
      write: true,
      ttlMs: Math.max(1, ceilMs(aheadAfter)),
      decision: {
        allowed: true,
        remaining: room(aheadAfter),
        limit: rule.burst + 1,
        resetAfterMs: ceilMs(aheadAfter),
        retryAfterMs: 0,
        delayMs,
      },
    };
  },

  adjust(state, now, rule, delta) {
    const { flow, ahead } = adjustTat(state, delta, toMicros(now), 1_000_000 / rule.ratePerSecond);
    return { state: flow, ttlMs: Math.max(1, ceilMs(ahead)) };
  },

  fromReset(now, resetAfterMs) {
    // The queue is empty `resetAfterMs` from now: its TAT, with no request counted since.
    return { anchor: toMicros(now + resetAfterMs), units: 0 };
  },
  unitMs: (rule) => 1000 / rule.ratePerSecond,

  serialize: serializeTat,
  deserialize: deserializeTat,
  luaArgs: (rule) => [rule.ratePerSecond, rule.burst, undelayed(rule)],
  fillMs: (rule) => ((rule.burst + 1) / rule.ratePerSecond) * 1000,
  scale(rule, factor) {
    const burst = scaledUnits(rule.burst + 1, factor) - 1;
    const delay = rule.delay === undefined ? undefined : Math.min(rule.delay, burst);
    return { ...rule, ratePerSecond: rule.ratePerSecond * factor, burst, ...(delay === undefined ? {} : { delay }) };
  },
};
