// Sliding window counter: the light approximation of a sliding window. Two
// epoch-aligned fixed-window counts, the current and the previous; the previous
// one weighs in proportion to how much of it the sliding window still covers:
//   count = current + previous * (1 - elapsedInCurrent / window)
// One key holds "<window start µs> <current> <previous>", all integers.
import { ceilMs, floorUnits, type PolicyModel, scaledUnits, toMicros } from '../model.js';
import type { SlidingCounterRule } from './rule.js';

export interface SlidingCounterState {
  /** Start of the current window, in microseconds since the epoch. */
  start: number;
  /** Units admitted in the current window. */
  current: number;
  /** Units admitted in the window before it. */
  previous: number;
}

/** Float noise allowance on the weighted count; the Lua twin uses the same. */
const EPSILON = 1e-9;

/** The state as seen from `nowUs`: windows that have rolled over shift or vanish. */
function viewAt(state: SlidingCounterState | undefined, nowUs: number, windowUs: number): SlidingCounterState {
  const start = nowUs - (nowUs % windowUs);
  if (state === undefined) return { start, current: 0, previous: 0 };
  if (state.start === start) return state;
  if (state.start === start - windowUs) return { start, current: 0, previous: state.current };
  return { start, current: 0, previous: 0 };
}

function weighted(view: SlidingCounterState, nowUs: number, windowUs: number): number {
  return view.current + view.previous * (1 - (nowUs - view.start) / windowUs);
}

function fitsAt(state: SlidingCounterState, atUs: number, windowUs: number, limit: number, want: number): boolean {
  return weighted(viewAt(state, atUs, windowUs), atUs, windowUs) + want <= limit + EPSILON;
}

/**
 * Milliseconds until `want` units fit: solved from the previous window's decay
 * (in this window, or in the next once the current count has become the
 * previous one), then stepped forward while float noise would still refuse.
 */
function retryMs(view: SlidingCounterState, nowUs: number, windowUs: number, limit: number, want: number): number {
  const end = view.start + windowUs;
  let at = view.start + 2 * windowUs; // both counts gone: always fits when want <= limit
  const room = limit - want - view.current;
  if (room >= 0 && view.previous > 0 && view.start + Math.ceil(windowUs * (1 - room / view.previous)) < end) {
    at = view.start + Math.ceil(windowUs * (1 - room / view.previous));
  } else if (view.current <= limit - want) {
    at = end;
  } else if (limit - want >= 0) {
    at = end + Math.ceil(windowUs * (1 - (limit - want) / view.current));
  }
  let ms = ceilMs(at - nowUs);
  for (let i = 0; i < 100 && want <= limit && !fitsAt(view, nowUs + ms * 1000, windowUs, limit, want); i++) ms += 1;
  return ms;
}

/** Until the weighted count is zero: the later of the two windows' ends that still hold units. */
function untilEmptyUs(view: SlidingCounterState, nowUs: number, windowUs: number): number {
  if (view.current > 0) return view.start + 2 * windowUs - nowUs;
  if (view.previous > 0) return view.start + windowUs - nowUs;
  return 0;
}

export const slidingWindowCounter: PolicyModel<SlidingCounterRule, SlidingCounterState> = {
  policy: 'sliding_window_counter',

  step(state, now, rule, cost) {
    const nowUs = toMicros(now);
    const windowUs = rule.windowMs * 1000;
    const view = viewAt(state, nowUs, windowUs);
    const count = weighted(view, nowUs, windowUs);
    const want = cost === 0 ? 1 : cost;
    const fits = count + want <= rule.limit + EPSILON;

    if (!fits || cost === 0) {
      return {
        state: view,
        write: false,
        ttlMs: ceilMs(untilEmptyUs(view, nowUs, windowUs)),
        decision: {
          allowed: fits,
          remaining: floorUnits(rule.limit - count),
          limit: rule.limit,
          resetAfterMs: ceilMs(untilEmptyUs(view, nowUs, windowUs)),
          retryAfterMs: fits ? 0 : retryMs(view, nowUs, windowUs, rule.limit, want),
          delayMs: 0,
        },
      };
    }
    const next = { start: view.start, current: view.current + cost, previous: view.previous };
    const untilEmpty = untilEmptyUs(next, nowUs, windowUs); // two windows from the start
    return {
      state: next,
      write: true,
      ttlMs: Math.max(1, ceilMs(untilEmpty)),
      decision: {
        allowed: true,
        remaining: floorUnits(rule.limit - (count + cost)),
        limit: rule.limit,
        resetAfterMs: ceilMs(untilEmpty),
        retryAfterMs: 0,
        delayMs: 0,
      },
    };
  },

  // The current window's count only: the previous one is history Redis's late
  // reply no longer changes.
  adjust(state, now, rule, delta) {
    const nowUs = toMicros(now);
    const windowUs = rule.windowMs * 1000;
    const view = viewAt(state, nowUs, windowUs);
    const next = { start: view.start, current: Math.max(0, view.current + delta), previous: view.previous };
    return { state: next, ttlMs: Math.max(1, ceilMs(untilEmptyUs(next, nowUs, windowUs))) };
  },

  serialize: (state) => `${state.start} ${state.current} ${state.previous}`,
  deserialize(text) {
    const [start, current, previous] = text.split(' ').map(Number);
    return { start: start ?? 0, current: current ?? 0, previous: previous ?? 0 };
  },
  luaArgs: (rule) => [rule.limit, rule.windowMs],
  fillMs: (rule) => rule.windowMs,
  scale: (rule, factor) => ({ ...rule, limit: scaledUnits(rule.limit, factor) }),
};
