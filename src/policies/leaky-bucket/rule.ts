// The leaky bucket's rule, as nginx's limit_req: `ratePerSecond`, a `burst`
// of requests that may wait, `delay` of them served at once (or `nodelay`:
// all). A full queue drains within 366 days, or ten times that when nothing
// is delayed.
import type { z as Zod } from 'zod';
import { checkFillTime, lazyRuleSchema, MAX_COUNT, MAX_FILL_SECONDS } from '../rule-fields.js';

// A leaky bucket that delays nothing (nginx `nodelay`, or `delay` at or above
// `burst`) may take ten times as long to drain, as nginx allows
// `rate=1r/m burst=1000000 nodelay` (694 days): nothing is held for that long,
// the state (µs at which the queue is empty) stays below 2^53 for another
// century, and its TTL, even with 256 shards and the smallest region share,
// stays below the 1e17 ms Redis can expire from Lua.
/** Longest time a full queue that delays nothing may take to drain: 3660 days. */
const MAX_UNDELAYED_DRAIN_SECONDS = 10 * MAX_FILL_SECONDS;

export const leakyBucketSchema = lazyRuleSchema((z, { rate, common }) =>
  z
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
    }),
);
export type LeakyBucketRule = Zod.infer<typeof leakyBucketSchema>;
