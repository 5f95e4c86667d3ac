// The fixed window's registry entry: its model, its Lua twin, its rule and
// what the rest of Sluice asks of it (policies/entry.ts). It is the one
// policy with real windows: on the calendar of a time zone, on the UTC
// clock's grid (aligned), or opened by a first request; the RateLimit-Policy
// header and the notifier ask it for the window a moment falls in.
import { calendarWindowAt } from '../../core/calendar.js';
import type { DecisionWindow, PolicyEntry } from '../entry.js';
import { fixedWindow } from './model.js';
import { type FixedWindowRule, fixedWindowSchema } from './rule.js';

/** A calendar window is at least a day: a point this far before its estimated end is inside it whatever the clock skew. */
const CALENDAR_MARGIN_MS = 60_000;
/** Never used by a valid rule (the schema asks windowMs without calendar): a window length that cannot divide by zero. */
const NO_WINDOW_MS = 60_000;

/** The window a decision whose bucket resets at `end` belongs to. */
function decisionWindow(rule: FixedWindowRule, end: number, now: number): DecisionWindow {
  if (rule.calendar !== undefined) {
    const window = calendarWindowAt(end - CALENDAR_MARGIN_MS, rule.calendar);
    return { start: window.start, resetAt: window.end, ttlMs: Math.max(1, window.end - now) };
  }
  const windowMs = rule.windowMs ?? NO_WINDOW_MS;
  if (rule.windowStart === 'first_request') {
    // No grid to snap to: the end, to the second, names the window (instances agree unless their clocks differ by half a second).
    const resetAt = Math.round(end / 1000) * 1000;
    return { start: resetAt - windowMs, resetAt, ttlMs: Math.max(1, end - now) };
  }
  // Aligned: the end is a grid point; rounding to the nearest one absorbs any skew under half a window.
  const offset = rule.offsetMs ?? 0;
  const resetAt = Math.round((end - offset) / windowMs) * windowMs + offset;
  return { start: resetAt - windowMs, resetAt, ttlMs: Math.max(1, resetAt - now) };
}

export const fixedWindowPolicy: PolicyEntry<FixedWindowRule> = {
  policy: 'fixed_window',
  schema: fixedWindowSchema,
  model: fixedWindow,
  lua: new URL('./fixed-window.lua', import.meta.url),
  adjustLua: new URL('./adjust.lua', import.meta.url),
  carry: 'window',
  calendarWindows: true,
  leasable: true,
  capacity: (rule) => rule.limit,
  currentWindowMs(rule, now) {
    if (rule.calendar === undefined) return undefined;
    // A calendar window's length changes (months, DST days): the current one's.
    const { start, end } = calendarWindowAt(now, rule.calendar);
    return end - start;
  },
  decisionWindow,
  formFields: [
    { name: 'limit', label: 'Limit' },
    { name: 'windowMs', label: 'Window (ms)' },
  ],
};
