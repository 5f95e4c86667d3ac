// A calendar rule as decided at a moment: the rule with the window boundaries
// around that moment attached (core/calendar.ts computes them from the
// time-zone rules). The models and their Lua twins take the boundaries as
// inputs and pick the window from their own clock (Redis's TIME on Redis), so
// they stay pure and need no time-zone data. Stores resolve a rule just before
// they run it; a rule without `calendar` passes through untouched.
import { type Boundaries, type BoundariesAt, type CalendarSpec, calendarBoundaries } from '../core/calendar.js';

/** What a store adds to a calendar rule before a model or a twin runs it. */
export interface CalendarBounded {
  /** Three consecutive window boundaries (epoch ms); the clock picks [b0, b1) before b1, [b1, b2) from it on. */
  readonly boundaries?: Boundaries;
}

/** Any policy's rule: only one whose policy may follow the calendar (the registry's `calendarWindows`) carries `calendar`. */
interface AnyRule {
  readonly calendar?: CalendarSpec;
}

interface Resolved {
  rule: AnyRule;
  validFrom: number;
  validUntil: number;
}

/** Per rule object, the boundaries last resolved and the span they hold for: one time-zone computation per window half. */
const resolved = new WeakMap<AnyRule, Resolved>();

/** Per calendar (unit, zone, anchor), the same: a rule object made anew per call (a library resolver) still costs no time-zone computation. */
const byCalendar = new Map<string, BoundariesAt>();
const MAX_CALENDARS = 1024; // zones × units × anchors in use: few, but bounded anyway

function boundariesAround(calendar: CalendarSpec, ms: number): BoundariesAt {
  const id = `${calendar.unit}|${calendar.timeZone}|${calendar.anchor ?? ''}`;
  const known = byCalendar.get(id);
  if (known !== undefined && ms >= known.validFrom && ms < known.validUntil) return known;
  const at = calendarBoundaries(ms, calendar);
  if (byCalendar.size >= MAX_CALENDARS) byCalendar.clear();
  byCalendar.set(id, at);
  return at;
}

/** Whether `rule` still needs its boundaries: a calendar rule not yet resolved (checked before reading a clock on the hot path). */
export const needsBoundaries = (rule: object): boolean => (rule as AnyRule).calendar !== undefined && (rule as CalendarBounded).boundaries === undefined;

/** `rule` with the calendar boundaries around `ms` attached, the same object while they hold; any other rule as it is. */
export function ruleAt<R extends object>(rule: R, ms: number): R {
  const calendar = (rule as AnyRule).calendar;
  if (calendar === undefined || (rule as CalendarBounded).boundaries !== undefined) return rule;
  const cached = resolved.get(rule as AnyRule);
  if (cached !== undefined && ms >= cached.validFrom && ms < cached.validUntil) return cached.rule as R;
  const at = boundariesAround(calendar, ms);
  const bounded = { ...rule, boundaries: at.boundaries };
  resolved.set(rule as AnyRule, { rule: bounded as AnyRule, validFrom: at.validFrom, validUntil: at.validUntil });
  return bounded;
}

/** The boundaries a calendar rule was resolved with; throws when a store forgot to resolve it. */
export function boundariesOf(rule: { readonly policy: string } & CalendarBounded): Boundaries {
  if (rule.boundaries === undefined) throw new Error('a calendar rule reached a model without its window boundaries (resolve it with ruleAt first)');
  return rule.boundaries;
}
