// Calendar windows: where a day, week, month or year starts in a time zone,
// from the runtime's ICU time-zone data (Intl.DateTimeFormat with timeZone).
// Lua inside Redis has no time-zone data, so the TypeScript side turns the
// rules into plain instants (epoch ms) and the models and their Lua twins
// only compare a clock against them (see `calendarBoundaries`).
//
// A window starts at local midnight: every day, on the ISO weekday `anchor`
// (1 = Monday, the default) for weeks, on day `anchor` (default 1) of each
// month, clamped to the month's last day (anchor 31 resets on 30 April and on
// 28 or 29 February), and on the 1st of month `anchor` (default 1 = January)
// for years. A day with a DST change is 23 or 25 hours long; where local
// midnight does not exist (a zone that springs forward at 00:00), the day
// starts at the first instant it has.

export const CALENDAR_UNITS = ['day', 'week', 'month', 'year'] as const;
export type CalendarUnit = (typeof CALENDAR_UNITS)[number];

export interface CalendarSpec {
  unit: CalendarUnit;
  /** An IANA time zone the runtime knows, e.g. Europe/Paris. */
  timeZone: string;
  /** week: ISO weekday 1-7 (Monday 1); month: day of the month 1-31, clamped to short months; year: month 1-12. */
  anchor?: number;
}

/** The range each unit's anchor takes; a day has none. */
export const ANCHOR_RANGE: Record<CalendarUnit, readonly [number, number] | undefined> = {
  day: undefined,
  week: [1, 7],
  month: [1, 31],
  year: [1, 12],
};

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let format = formatters.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, format);
  }
  return format;
}

/** Whether the runtime's ICU data knows `timeZone`. */
export function isTimeZone(timeZone: string): boolean {
  if (timeZone === '' || timeZone.length > 64) return false;
  try {
    formatterOf(timeZone);
    return true;
  } catch {
    return false;
  }
}

interface Civil {
  year: number;
  month: number; // 1-12
  day: number;
}

/** The local date and time at `ms` in `timeZone`, as the UTC instant with the same wall-clock reading. */
function wallClockOf(ms: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatterOf(timeZone).formatToParts(ms)) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
}

/** The zone's offset from UTC at `ms` (ms, whole seconds). */
const offsetAt = (ms: number, timeZone: string): number => wallClockOf(Math.floor(ms / 1000) * 1000, timeZone) - Math.floor(ms / 1000) * 1000;

function civilOf(ms: number, timeZone: string): Civil {
  const wall = new Date(wallClockOf(ms, timeZone));
  return { year: wall.getUTCFullYear(), month: wall.getUTCMonth() + 1, day: wall.getUTCDate() };
}

/** The civil date `days` after `date` (negative: before), month and year lengths included. */
function plusDays(date: Civil, days: number): Civil {
  const moved = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() };
}

const daysIn = (year: number, month: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate();

/** The first instant of the local day `date` in `timeZone`: local midnight, or the end of a DST gap that swallowed it. */
export function startOfDay(date: Civil, timeZone: string): number {
  const wall = Date.UTC(date.year, date.month - 1, date.day);
  // The offsets around that day (a zone changes its offset at most once a day).
  const offsets = new Set([offsetAt(wall - 86_400_000, timeZone), offsetAt(wall, timeZone), offsetAt(wall + 86_400_000, timeZone)]);
  const valid = [...offsets].map((offset) => wall - offset).filter((at) => offsetAt(at, timeZone) === wall - at);
  if (valid.length > 0) return Math.min(...valid); // in a repeated hour, the first of the two midnights
  // Midnight fell in a gap: the day starts at the change, found between the two readings (whole seconds).
  let low = wall - Math.max(...offsets); // still the day before
  let high = wall - Math.min(...offsets); // already the day itself
  while (high - low > 1000) {
    const mid = Math.floor((low + high) / 2000) * 1000;
    if (wallClockOf(mid, timeZone) >= wall) high = mid;
    else low = mid;
  }
  return high;
}

/** The local date the window holding local date `date` starts on, and the date the next one starts on. */
function windowDates(date: Civil, spec: CalendarSpec, timeZone: string, at: number): [Civil, Civil] {
  switch (spec.unit) {
    case 'day':
      return [date, plusDays(date, 1)];
    case 'week': {
      const weekday = ((new Date(wallClockOf(at, timeZone)).getUTCDay() + 6) % 7) + 1; // ISO: Monday 1 .. Sunday 7
      const first = plusDays(date, -((weekday - (spec.anchor ?? 1) + 7) % 7));
      return [first, plusDays(first, 7)];
    }
    case 'month': {
      const anchor = spec.anchor ?? 1;
      const resetIn = (year: number, month: number): Civil => ({ year, month, day: Math.min(anchor, daysIn(year, month)) });
      const shift = (year: number, month: number, by: number) => {
        const index = year * 12 + (month - 1) + by;
        return resetIn(Math.floor(index / 12), (index % 12) + 1);
      };
      const here = resetIn(date.year, date.month);
      return date.day >= here.day ? [here, shift(date.year, date.month, 1)] : [shift(date.year, date.month, -1), here];
    }
    case 'year': {
      const month = spec.anchor ?? 1;
      const year = date.month >= month ? date.year : date.year - 1;
      return [
        { year, month, day: 1 },
        { year: year + 1, month, day: 1 },
      ];
    }
  }
}

/** The calendar window holding the instant `ms`: [start, end) in epoch ms. */
export function calendarWindowAt(ms: number, spec: CalendarSpec): { start: number; end: number } {
  const [first, next] = windowDates(civilOf(ms, spec.timeZone), spec, spec.timeZone, ms);
  return { start: startOfDay(first, spec.timeZone), end: startOfDay(next, spec.timeZone) };
}

/** Three consecutive window boundaries in epoch ms, the middle one the nearest to the moment they were computed at. */
export type Boundaries = readonly [number, number, number];

export interface BoundariesAt {
  boundaries: Boundaries;
  /** The span of instants whose nearest boundary is the middle one: the same three boundaries hold for all of it. */
  validFrom: number;
  validUntil: number;
}

/**
 * The boundaries a decision at about `ms` needs: the window holding `ms`, and
 * the one before or after it, whichever is nearer. A clock (Redis's TIME) that
 * reads up to half a window either side of `ms` still finds its own window
 * among them: before the middle boundary it is [b0, b1), from it on [b1, b2).
 */
export function calendarBoundaries(ms: number, spec: CalendarSpec): BoundariesAt {
  const { start, end } = calendarWindowAt(ms, spec);
  const boundaries: Boundaries = ms - start < end - ms ? [calendarWindowAt(start - 1, spec).start, start, end] : [start, end, calendarWindowAt(end, spec).end];
  const [b0, b1, b2] = boundaries;
  return { boundaries, validFrom: b0 + (b1 - b0) / 2, validUntil: b1 + (b2 - b1) / 2 };
}
