// The fixed window's rule: `limit` units per window, the windows either of a
// fixed length (`windowMs`, aligned on the UTC clock's grid shifted by
// `offsetMs`, or opened by the first request) or on the calendar of a time
// zone (`calendar`: a day, week, month or year; core/calendar.ts).
import type { z as Zod } from 'zod';
import { ANCHOR_RANGE, CALENDAR_UNITS, isTimeZone } from '../../core/calendar.js';
import { lazyRuleSchema, type Z } from '../rule-fields.js';

/** A window that follows the calendar of a time zone (core/calendar.ts). */
function calendarSchemaOf(z: Z) {
  return z
    .object({
      unit: z.enum(CALENDAR_UNITS),
      timeZone: z.string().refine(isTimeZone, 'unknown time zone: expected an IANA name such as Europe/Paris or UTC'),
      anchor: z.number().int('must be an integer').optional(),
    })
    .strict()
    .superRefine((calendar, ctx) => {
      if (calendar.anchor === undefined) return;
      const range = ANCHOR_RANGE[calendar.unit];
      if (range === undefined) ctx.addIssue({ code: 'custom', path: ['anchor'], message: 'a day window has no anchor (it starts at local midnight)' });
      else if (calendar.anchor < range[0] || calendar.anchor > range[1]) {
        const what = { week: 'an ISO weekday, 1 = Monday', month: 'a day of the month', year: 'a month' }[calendar.unit as 'week' | 'month' | 'year'];
        ctx.addIssue({ code: 'custom', path: ['anchor'], message: `must be ${range[0]}-${range[1]} for unit ${calendar.unit} (${what})` });
      }
    });
}

export const fixedWindowSchema = lazyRuleSchema((z, { count, windowMs, common }) =>
  z
    .object({
      policy: z.literal('fixed_window'),
      limit: count(),
      /** The window's length; absent when `calendar` sets the windows. */
      windowMs: windowMs.optional(),
      /** Windows on the calendar of a time zone instead of a fixed length: {unit: day|week|month|year, timeZone, anchor?}. */
      calendar: calendarSchemaOf(z).optional(),
      /** `aligned` (default): windows on the UTC clock's grid, shifted by offsetMs; `first_request`: a window opens at the first request after the last one ended. */
      windowStart: z.enum(['aligned', 'first_request']).optional(),
      /** Aligned windows start this long after each multiple of windowMs since 00:00 UTC (e.g. 3600000: daily windows from 01:00 UTC). */
      offsetMs: z.number().int('must be an integer').min(0, 'must be at least 0').optional(),
      ...common,
    })
    .strict()
    .superRefine((rule, ctx) => {
      if (rule.calendar !== undefined) {
        if (rule.windowMs !== undefined) ctx.addIssue({ code: 'custom', path: ['windowMs'], message: 'cannot be combined with calendar (the calendar sets the windows)' });
        if (rule.windowStart !== undefined) ctx.addIssue({ code: 'custom', path: ['windowStart'], message: 'cannot be combined with calendar (calendar windows start at local midnight)' });
        if (rule.offsetMs !== undefined) ctx.addIssue({ code: 'custom', path: ['offsetMs'], message: 'cannot be combined with calendar (use calendar.timeZone and calendar.anchor)' });
        return;
      }
      if (rule.windowMs === undefined) {
        ctx.addIssue({ code: 'custom', path: ['windowMs'], message: 'is required (or give calendar: {unit, timeZone})' });
        return;
      }
      if (rule.offsetMs === undefined) return;
      if (rule.windowStart === 'first_request') ctx.addIssue({ code: 'custom', path: ['offsetMs'], message: 'applies to aligned windows only, not windowStart: first_request' });
      else if (rule.offsetMs >= rule.windowMs) ctx.addIssue({ code: 'custom', path: ['offsetMs'], message: `must be less than windowMs (${rule.windowMs})` });
    }),
);
export type FixedWindowRule = Zod.infer<typeof fixedWindowSchema>;
