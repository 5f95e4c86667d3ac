// What every policy's rule schema is built from: the bounds every store can
// hold and every header can carry, the field types the policies share, the
// options every rule accepts whatever its policy, and the check that a rate
// fills (or drains) its bucket in a time Redis can expire. Each policy's own
// schema (`<policy>/rule.ts`) is built from these with zod, loaded on the first
// rule parsed or schema read, not by `import 'sluice'` (docs/library.md#weight).
import type { z as Zod } from 'zod';
import { lazily } from '../core/lazy.js';
import { loadPackage } from '../core/load-package.js';

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
export const MAX_FILL_SECONDS = MAX_WINDOW_MS / 1000;
/** Smallest region share: a smaller one would stretch a bucket's fill time past what Redis can expire. */
export const MIN_REGION_SHARE = 0.001;

/** `value` rounded up to 4 significant digits: a minimum quoted in a message must itself pass. */
function ceil4(value: number): number {
  const step = 10 ** (Math.floor(Math.log10(value)) - 3);
  return Number((Math.ceil(value / step) * step).toPrecision(4));
}

/** A rate's check: `units` at `perSecond` (the `field`), `what` naming the units in the message. */
export interface FillTime {
  readonly units: number;
  readonly perSecond: number;
  readonly field: string;
  readonly what: string;
  readonly maxSeconds?: number;
}

/** Adds an issue when `units` at `perSecond` take longer than `maxSeconds` (MAX_FILL_SECONDS) to fill or drain. */
export function checkFillTime(ctx: Zod.RefinementCtx, { units, perSecond, field, what, maxSeconds = MAX_FILL_SECONDS }: FillTime): void {
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

export type Z = typeof Zod;

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

export type RuleFields = ReturnType<typeof fieldsOf>;

let fields: RuleFields | undefined;
let zod: Z | undefined;

/**
 * Stands for the schema `build` makes from zod and the shared fields, built
 * (zod loaded) on its first read: each policy's schema is declared at module
 * level as usual and costs nothing until a rule is parsed.
 */
export function lazyRuleSchema<S extends object>(build: (z: Z, fields: RuleFields) => S): S {
  return lazily(() => {
    zod ??= loadPackage<{ z: Z }>('zod').z;
    fields ??= fieldsOf(zod);
    return build(zod, fields);
  });
}

/** A capacity refilled at a rate (the token bucket, GCRA): the schema of `policy`'s rule. */
export function refillSchemaOf<P extends string>(z: Z, { count, rate, common }: RuleFields, policy: P) {
  return z
    .object({ policy: z.literal(policy), capacity: count(), refillPerSecond: rate, ...common })
    .strict()
    .superRefine((rule, ctx) => checkFillTime(ctx, { units: rule.capacity, perSecond: rule.refillPerSecond, field: 'refillPerSecond', what: 'capacity' }));
}
