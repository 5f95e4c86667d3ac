// Sliding window log: exact. Every admitted unit leaves its timestamp in the
// log; a unit counts while it is younger than the window. Entries that have
// left the window are dropped on every write, so a key holds at most `limit`
// entries (the schema caps the limit to bound memory).
import { ceilMs, type PolicyModel, scaledUnits, toMicros } from '../model.js';
import type { SlidingLogRule } from './rule.js';

export interface SlidingLogState {
  /** Microsecond timestamps of the admitted units, oldest first, one per unit. */
  log: number[];
}

export const slidingWindowLog: PolicyModel<SlidingLogRule, SlidingLogState> = {
  policy: 'sliding_window_log',

  step(state, now, rule, cost) {
    const nowUs = toMicros(now);
    const windowUs = rule.windowMs * 1000;
    const cutoff = nowUs - windowUs; // an entry at or before the cutoff has left the window
    const log = (state?.log ?? []).filter((t) => t > cutoff);
    const want = cost === 0 ? 1 : cost;
    const fits = log.length + want <= rule.limit;
    const newest = log.at(-1);

    if (!fits || cost === 0) {
      return {
        state: { log },
        write: false,
        ttlMs: newest === undefined ? 0 : ceilMs(newest + windowUs - nowUs),
        decision: {
          allowed: fits,
          remaining: rule.limit - log.length,
          limit: rule.limit,
          resetAfterMs: newest === undefined ? 0 : ceilMs(newest + windowUs - nowUs),
          retryAfterMs: fits ? 0 : retryUs(log, log.length + want - rule.limit, windowUs, nowUs),
          delayMs: 0,
        },
      };
    }
    const added: number[] = new Array(cost).fill(nowUs);
    // Time only moves forward in practice; sort only if a clock stepped back.
    const next = newest === undefined || newest <= nowUs ? log.concat(added) : log.concat(added).sort((a, b) => a - b);
    return {
      state: { log: next },
      write: true,
      ttlMs: Math.max(1, ceilMs((next.at(-1) ?? nowUs) + windowUs - nowUs)),
      decision: {
        allowed: true,
        remaining: rule.limit - next.length,
        limit: rule.limit,
        resetAfterMs: ceilMs((next.at(-1) ?? nowUs) + windowUs - nowUs),
        retryAfterMs: 0,
        delayMs: 0,
      },
    };
  },

  // A charge adds `delta` entries at now; a refund removes the newest entries
  // still in the window. The log keeps at most `limit` entries (the newest), so
  // the schema's memory bound holds: entries past a full window change no
  // decision, since the newest `limit` alone say whether a unit fits.
  adjust(state, now, rule, delta) {
    const nowUs = toMicros(now);
    const windowUs = rule.windowMs * 1000;
    let log = (state?.log ?? []).filter((t) => t > nowUs - windowUs);
    if (delta > 0) log = log.concat(new Array(delta).fill(nowUs)).sort((a, b) => a - b);
    else log = log.slice(0, Math.max(0, log.length + delta));
    log = log.slice(Math.max(0, log.length - rule.limit));
    const newest = log.at(-1);
    return { state: { log }, ttlMs: newest === undefined ? 0 : Math.max(1, ceilMs(newest + windowUs - nowUs)) };
  },

  serialize: (state) => state.log.join(','),
  deserialize: (text) => ({ log: text === '' ? [] : text.split(',').map(Number) }),
  luaArgs: (rule) => [rule.limit, rule.windowMs],
  fillMs: (rule) => rule.windowMs,
  scale: (rule, factor) => ({ ...rule, limit: scaledUnits(rule.limit, factor) }),
};

/**
 * Milliseconds until `need` entries have left the window: the need-th oldest
 * leaves at its timestamp plus the window. A cost above the limit never fits;
 * it is told to wait out the whole log (the engine refuses such costs first).
 */
function retryUs(log: number[], need: number, windowUs: number, nowUs: number): number {
  if (log.length === 0) return ceilMs(windowUs);
  const leaving = log[Math.min(need, log.length) - 1] as number;
  return ceilMs(leaving + windowUs - nowUs);
}
