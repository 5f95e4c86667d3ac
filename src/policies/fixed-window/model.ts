// Fixed window: at most `limit` units per window. By default windows are
// aligned to the UTC clock (multiples of windowMs since the epoch, shifted by
// offsetMs), so every instance and the Lua twin agree on where a window starts
// and a daily window resets for every tenant at 00:00 UTC; with
// `windowStart: first_request` each bucket's window opens at its first request
// after the previous one ended. Cheap and simple; a client may spend a full
// window at the end of one and again at the start of the next (the boundary
// double burst).
//
// With `calendar` the windows follow a time zone's calendar (days, weeks,
// months, years: core/calendar.ts). The model stays pure: the store attaches
// three window boundaries to the rule (policies/calendar-rule.ts) and the
// model, like the Lua twin against Redis TIME, picks the window `now` falls in.
import { boundariesOf, type CalendarBounded } from '../calendar-rule.js';
import { ceilMs, type PolicyModel, scaledUnits, toMicros } from '../model.js';
import type { FixedWindowRule } from './rule.js';

export interface FixedWindowState {
  /** Start of the window the count belongs to, in microseconds since the epoch. */
  start: number;
  /** Units admitted in that window. */
  count: number;
  /**
   * Calendar windows only: the window's end (µs). A rule whose zone, anchor or
   * unit changed finds its count in a window of other boundaries; while that
   * window is still open, its count carries into the new rule's window.
   */
  end?: number;
}

export const fixedWindow: PolicyModel<FixedWindowRule, FixedWindowState> = {
  policy: 'fixed_window',

  step(state, now, rule, cost) {
    const nowUs = toMicros(now);
    const { start, end } = windowOf(state, nowUs, rule);
    const untilEnd = end - nowUs;
    const count = countIn(state, start, nowUs, rule);
    const ends = rule.calendar === undefined ? {} : { end };
    const want = cost === 0 ? 1 : cost;
    const fits = count + want <= rule.limit;

    if (!fits || cost === 0) {
      // A refused cost counts nothing: the window's count stays as it was.
      return {
        state: { start, count, ...ends },
        write: false,
        ttlMs: ceilMs(untilEnd),
        decision: {
          allowed: fits,
          remaining: Math.max(0, rule.limit - count), // a charge past the limit (adjust) is never a negative header
          limit: rule.limit,
          resetAfterMs: ceilMs(untilEnd),
          retryAfterMs: fits ? 0 : ceilMs(untilEnd),
          delayMs: 0,
        },
      };
    }
    const after = count + cost;
    return {
      state: { start, count: after, ...ends },
      write: true,
      ttlMs: Math.max(1, ceilMs(untilEnd)), // the key dies with its window
      decision: {
        allowed: true,
        remaining: rule.limit - after,
        limit: rule.limit,
        resetAfterMs: ceilMs(untilEnd),
        retryAfterMs: 0,
        delayMs: 0,
      },
    };
  },

  // The count of the current window only: units charged past the limit stay
  // counted until the window ends; a refund in a later window gives nothing back.
  adjust(state, now, rule, delta) {
    const nowUs = toMicros(now);
    const { start, end } = windowOf(state, nowUs, rule);
    const count = countIn(state, start, nowUs, rule);
    const ends = rule.calendar === undefined ? {} : { end };
    return { state: { start, count: Math.max(0, count + delta), ...ends }, ttlMs: Math.max(1, ceilMs(end - nowUs)) };
  },

  serialize: (state) => (state.end === undefined ? `${state.start}:${state.count}` : `${state.start}:${state.count}:${state.end}`),
  deserialize(text) {
    const [start, count, end] = text.split(':').map(Number);
    return end === undefined ? { start: start ?? 0, count: count ?? 0 } : { start: start ?? 0, count: count ?? 0, end };
  },
  luaArgs(rule) {
    if (rule.calendar === undefined) return [rule.limit, rule.windowMs!, rule.windowStart === 'first_request' ? 1 : 0, rule.offsetMs ?? 0];
    return [rule.limit, 0, 2, 0, ...boundariesOf(rule)]; // mode 2: calendar, ARGV[7..9] the boundaries (ms)
  },
  // A calendar window's length changes (months, DST days): its callers read the current window's.
  fillMs: (rule) => rule.windowMs ?? 0,
  scale: (rule, factor) => ({ ...rule, limit: scaledUnits(rule.limit, factor) }),
};

/**
 * The count of the window starting at `start`: the stored one when it is that
 * window's; for a calendar rule also the count of a calendar window of other
 * boundaries (a changed zone, anchor or unit) that is still open at `nowUs`;
 * otherwise an older window's, which counts nothing.
 */
function countIn(state: FixedWindowState | undefined, start: number, nowUs: number, rule: FixedWindowRule): number {
  if (state === undefined) return 0;
  if (state.start === start) return state.count;
  return rule.calendar !== undefined && state.end !== undefined && state.start <= nowUs && nowUs < state.end ? state.count : 0;
}

/** The window (µs) `nowUs` falls in: among the calendar boundaries, the bucket's open window or one starting now, or on the clock's grid. */
function windowOf(state: FixedWindowState | undefined, nowUs: number, rule: FixedWindowRule & CalendarBounded): { start: number; end: number } {
  if (rule.calendar !== undefined) {
    // Before the middle boundary [b0, b1), from it on [b1, b2): the boundaries hold half a window of clock skew either way.
    const [b0, b1, b2] = boundariesOf(rule);
    return nowUs < b1 * 1000 ? { start: b0 * 1000, end: b1 * 1000 } : { start: b1 * 1000, end: b2 * 1000 };
  }
  const windowUs = rule.windowMs! * 1000;
  if (rule.windowStart === 'first_request') {
    const start = state !== undefined && nowUs < state.start + windowUs ? state.start : nowUs;
    return { start, end: start + windowUs };
  }
  const offsetUs = (rule.offsetMs ?? 0) * 1000;
  const start = nowUs - ((nowUs - offsetUs) % windowUs); // exact, unlike floor(now / window) * window
  return { start, end: start + windowUs };
}
