// What a rule is, and the one schema every rule passes through, whether it comes
// from the config file, the admin API, PostgreSQL or the library API.
import type { z as Zod } from 'zod';
import { ANCHOR_RANGE, CALENDAR_UNITS, isTimeZone } from './calendar.js';
import { SluiceError } from './errors.js';
import { lazily } from './lazy.js';
import { loadPackage } from './load-package.js';

export const POLICIES = [
  'token_bucket',
  'gcra',
  'fixed_window',
  'sliding_window_log',
  'sliding_window_counter',
  'leaky_bucket',
] as const;
export type PolicyName = (typeof POLICIES)[number];

// Bounds every store can hold and every header can carry. Counts stay well
// inside a double's exact integers even in millionths (the token bucket's
// state: 1e9 × 1e6 = 1e15 < 2^53); a window, or the time an empty bucket
// takes to fill, is at most 366 days, so every Redis key gets a finite TTL
// (PEXPIRE takes integers below 1e17 ms from Lua) and every header integer
// stays far within the 15 digits of a structured-field integer.
/** Most units a capacity, limit or burst + 1 may hold. */
export const MAX_COUNT = 1_000_000_000;
/** Fastest refill or leak, units per second. */
export const MAX_RATE = 1_000_000_000;
/** Longest window, and longest time an empty bucket may take to fill: 366 days. */
export const MAX_WINDOW_MS = 366 * 24 * 3600 * 1000;
const MAX_FILL_SECONDS = MAX_WINDOW_MS / 1000;
// A leaky bucket that delays nothing (nginx `nodelay`, or `delay` at or above
// `burst`) may take ten times as long to drain, as nginx allows
// `rate=1r/m burst=1000000 nodelay` (694 days): nothing is held for that long,
// the state (µs at which the queue is empty) stays below 2^53 for another
// century, and its TTL, even with 256 shards and the smallest region share,
// stays below the 1e17 ms Redis can expire from Lua.
/** Longest time a full queue that delays nothing may take to drain: 3660 days. */
const MAX_UNDELAYED_DRAIN_SECONDS = 10 * MAX_FILL_SECONDS;
/** Smallest region share: a smaller one would stretch a bucket's fill time past what Redis can expire. */
export const MIN_REGION_SHARE = 0.001;
/** The sliding log keeps one entry per admitted unit: its limit bounds memory per key. */
export const MAX_LOG_LIMIT = 100_000;

/** `value` rounded up to 4 significant digits: a minimum quoted in a message must itself pass. */
function ceil4(value: number): number {
  const step = 10 ** (Math.floor(Math.log10(value)) - 3);
  return Number((Math.ceil(value / step) * step).toPrecision(4));
}

/** Issue when `units` at `perSecond` take longer than MAX_FILL_SECONDS to fill (or drain). */
/** A rate's check: `units` at `perSecond` (the `field`), `what` naming the units in the message. */
interface FillTime {
  readonly units: number;
  readonly perSecond: number;
  readonly field: string;
  readonly what: string;
  readonly maxSeconds?: number;
}

function checkFillTime(ctx: Zod.RefinementCtx, { units, perSecond, field, what, maxSeconds = MAX_FILL_SECONDS }: FillTime): void {
  // a hair of slack, so the slowest rate computed as units / maxSeconds passes despite rounding
  if (units / perSecond <= maxSeconds * (1 + 1e-12)) return;
  const message = `must be at least ${ceil4(units / maxSeconds)} (${what} / ${maxSeconds})`;
  const days = maxSeconds / 86_400;
  const why =
    what === 'capacity'
      ? `an empty bucket must fill within ${days} days`
      : maxSeconds === MAX_FILL_SECONDS
        ? `a full queue must drain within ${days} days (${days * 10} with nodelay)`
        : `a full queue must drain within ${days} days even with nodelay`;
  ctx.addIssue({ code: 'custom', path: [field], message: `${message}: ${why}` });
}

type Z = typeof Zod;

/** The field types the policies share, built with `z`. */
function fieldsOf(z: Z) {
  const count = (max = MAX_COUNT) => z.number().int('must be an integer').min(1, 'must be at least 1').max(max, `must be at most ${max}`);
  const rate = z.number().positive('must be positive').max(MAX_RATE, `must be at most ${MAX_RATE}`);
  const windowMs = z.number().int('must be an integer').min(1, 'must be at least 1').max(MAX_WINDOW_MS, `must be at most ${MAX_WINDOW_MS} (366 days)`);
  /** Options every policy accepts: how the rule behaves around the store, not how it counts. */
  const common = {
    /** Count but never refuse: roll a new limit out safely and watch what it would do. */
    shadow: z.boolean().optional(),
    /** What to do when the shared store is unreachable. */
    onStoreDown: z.enum(['fallback', 'open', 'closed']).optional(),
    /** Hot keys: take up to `batch` tokens per store call and spend them locally. */
    lease: z.object({ batch: count(10_000) }).strict().optional(),
    /** Hot keys: split the limit over this many sub-buckets spread across cluster nodes. */
    shards: z.number().int('must be an integer').min(2, 'must be at least 2').max(256, 'must be at most 256').optional(),
    /** Multi-region: the share of the limit each region enforces on its own store, e.g. {eu: 0.7, us: 0.3}. */
    regionShares: z.record(z.string().min(1).max(64), z.number().min(MIN_REGION_SHARE, `must be at least ${MIN_REGION_SHARE}`).max(1, 'must be at most 1')).optional(),
  };
  return { count, rate, windowMs, common };
}

/** The token bucket and GCRA: a capacity refilled at a rate. */
function refillSchemas(z: Z, { count, rate, common }: ReturnType<typeof fieldsOf>) {
  const refill = <P extends 'token_bucket' | 'gcra'>(policy: P) =>
    z
      .object({ policy: z.literal(policy), capacity: count(), refillPerSecond: rate, ...common })
      .strict()
      .superRefine((rule, ctx) => checkFillTime(ctx, { units: rule.capacity, perSecond: rule.refillPerSecond, field: 'refillPerSecond', what: 'capacity' }));
  return { tokenBucketSchema: refill('token_bucket'), gcraSchema: refill('gcra') };
}

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

/** The only policy whose window may follow the calendar; the others refuse `calendar` by name. */
export const CALENDAR_POLICIES: readonly PolicyName[] = ['fixed_window'];

function fixedWindowSchemaOf(z: Z, { count, windowMs, common }: ReturnType<typeof fieldsOf>) {
  return z
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
    });
}

function leakyBucketSchemaOf(z: Z, { rate, common }: ReturnType<typeof fieldsOf>) {
  return z
    .object({
      policy: z.literal('leaky_bucket'),
      ratePerSecond: rate,
      /** Requests that may wait beyond the one being served (nginx `burst`). */
      burst: z.number().int('must be an integer').min(0, 'must be at least 0').max(MAX_COUNT - 1, `must be at most ${MAX_COUNT - 1}`),
      /** Requests within the burst served without delay (nginx `delay=N`); absent = 0; at or above burst = nodelay, as in nginx. */
      delay: z.number().int('must be an integer').min(0, 'must be at least 0').optional(),
      /** nginx `nodelay`: the whole burst is served at once. */
      nodelay: z.boolean().optional(),
      ...common,
    })
    .strict()
    .superRefine((rule, ctx) => {
      const delaysNothing = rule.nodelay === true || (rule.delay ?? 0) >= rule.burst;
      checkFillTime(ctx, {
        units: rule.burst + 1,
        perSecond: rule.ratePerSecond,
        field: 'ratePerSecond',
        what: '(burst + 1)',
        maxSeconds: delaysNothing ? MAX_UNDELAYED_DRAIN_SECONDS : MAX_FILL_SECONDS,
      });
      if (rule.delay !== undefined && rule.nodelay) {
        ctx.addIssue({ code: 'custom', path: ['nodelay'], message: 'cannot be combined with delay' });
      }
    });
}

/** Every policy's schema and their union, built with `z`. */
function buildRuleSchemas(z: Z) {
  const fields = fieldsOf(z);
  const { count, windowMs, common } = fields;
  const { tokenBucketSchema, gcraSchema } = refillSchemas(z, fields);
  const fixedWindowSchema = fixedWindowSchemaOf(z, fields);
  const slidingLogSchema = z.object({ policy: z.literal('sliding_window_log'), limit: count(MAX_LOG_LIMIT), windowMs, ...common }).strict();
  const slidingCounterSchema = z.object({ policy: z.literal('sliding_window_counter'), limit: count(), windowMs, ...common }).strict();
  const leakyBucketSchema = leakyBucketSchemaOf(z, fields);
  const ruleSchema = z.discriminatedUnion('policy', [tokenBucketSchema, gcraSchema, fixedWindowSchema, slidingLogSchema, slidingCounterSchema, leakyBucketSchema]);
  return { tokenBucketSchema, gcraSchema, fixedWindowSchema, slidingLogSchema, slidingCounterSchema, leakyBucketSchema, ruleSchema };
}

// zod is loaded by the first rule parsed (or schema read), not by `import 'sluice'` (docs/library.md#weight).
let built: ReturnType<typeof buildRuleSchemas> | undefined;
const schemas = () => (built ??= buildRuleSchemas(loadPackage<{ z: Z }>('zod').z));

export const tokenBucketSchema = lazily(() => schemas().tokenBucketSchema);
export const gcraSchema = lazily(() => schemas().gcraSchema);
export const fixedWindowSchema = lazily(() => schemas().fixedWindowSchema);
export const slidingLogSchema = lazily(() => schemas().slidingLogSchema);
export const slidingCounterSchema = lazily(() => schemas().slidingCounterSchema);
export const leakyBucketSchema = lazily(() => schemas().leakyBucketSchema);
export const ruleSchema = lazily(() => schemas().ruleSchema);

export type Rule = Zod.infer<typeof ruleSchema>;
export type TokenBucketRule = Zod.infer<typeof tokenBucketSchema>;
export type GcraRule = Zod.infer<typeof gcraSchema>;
export type FixedWindowRule = Zod.infer<typeof fixedWindowSchema>;
export type SlidingLogRule = Zod.infer<typeof slidingLogSchema>;
export type SlidingCounterRule = Zod.infer<typeof slidingCounterSchema>;
export type LeakyBucketRule = Zod.infer<typeof leakyBucketSchema>;
export type RuleOf<P extends PolicyName> = Extract<Rule, { policy: P }>;

/** Turns the first zod issue into a SluiceError whose field is the dotted path under `prefix`. */
export function zodToSluiceError(error: Zod.ZodError, prefix: string, code: 'ERR_RULE_INVALID' | 'ERR_CONFIG_INVALID' | 'ERR_BAD_REQUEST' = 'ERR_RULE_INVALID'): SluiceError {
  const issue = error.issues[0];
  const path = issue ? issue.path.map(String) : [];
  const field = [prefix, ...path].filter((part) => part !== '').join('.');
  let message = issue?.message ?? 'is invalid';
  if (issue?.code === 'invalid_union' && path.length === 0) message = `unknown policy; expected one of ${POLICIES.join(', ')}`;
  if (issue?.code === 'unrecognized_keys') message = `unknown field(s) ${issue.keys.join(', ')}`;
  return new SluiceError(code, message, field || undefined);
}

/** Validates and returns a rule; throws SluiceError naming the offending field. */
export function parseRule(input: unknown, field = 'rule'): Rule {
  if (input === null || typeof input !== 'object') throw new SluiceError('ERR_RULE_INVALID', 'must be an object', field);
  const policy = (input as { policy?: unknown }).policy;
  if (!POLICIES.includes(policy as PolicyName)) {
    throw new SluiceError('ERR_RULE_INVALID', `unknown policy ${JSON.stringify(policy)}; expected one of ${POLICIES.join(', ')}`, `${field}.policy`);
  }
  if ('calendar' in input && !CALENDAR_POLICIES.includes(policy as PolicyName)) {
    throw new SluiceError('ERR_RULE_INVALID', `calendar windows apply to ${CALENDAR_POLICIES.join(', ')} only, not ${policy as string}`, `${field}.calendar`);
  }
  const result = schemas().ruleSchema.safeParse(input);
  if (!result.success) throw zodToSluiceError(result.error, field);
  checkedRules.add(result.data);
  return result.data;
}

/** Rule objects already through parseRule (its results, and inputs checkRule accepted). */
const checkedRules = new WeakSet<object>();

/**
 * Throws, as parseRule does, when `rule` is not a valid rule; each object is
 * checked once. The engines call it on every rule they are handed, so a rule
 * from any door (an adapter's resolve, a direct Engine.decide) is validated.
 * The schema has no defaults or transforms, so a valid input is used as is.
 */
export function checkRule(rule: Rule, field = 'rule'): Rule {
  if (rule === null || typeof rule !== 'object' || !checkedRules.has(rule)) {
    parseRule(rule, field);
    checkedRules.add(rule);
  }
  return rule;
}

/** The most units one call can ever be granted: a larger cost could never be allowed. */
export function capacityOf(rule: Rule): number {
  switch (rule.policy) {
    case 'token_bucket':
    case 'gcra':
      return rule.capacity;
    case 'fixed_window':
    case 'sliding_window_log':
    case 'sliding_window_counter':
      return rule.limit;
    case 'leaky_bucket':
      return rule.burst + 1;
  }
}

/** Throws when `cost` is not a positive integer the rule could ever grant. */
export function assertValidCost(rule: Rule, cost: number): void {
  if (!Number.isInteger(cost) || cost < 1) throw new SluiceError('ERR_COST_INVALID', 'must be a positive integer', 'cost');
  const capacity = capacityOf(rule);
  if (cost > capacity) throw new SluiceError('ERR_COST_INVALID', `${cost} exceeds the rule's capacity of ${capacity}: it could never be allowed`, 'cost');
}

/** JSON with sorted keys at every depth: equal values give equal text. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A stable identity of a rule's parameters, nested options included: caches keyed by it see a changed limit at once. */
export function ruleFingerprint(rule: Rule): string {
  return stableJson(rule);
}
