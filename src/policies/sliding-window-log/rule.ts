// The sliding log's rule: at most `limit` units in any `windowMs`. The log
// keeps one entry per admitted unit, so its limit is bounded lower than the
// other policies' counts.
import type { z as Zod } from 'zod';
import { lazyRuleSchema } from '../rule-fields.js';

/** The sliding log keeps one entry per admitted unit: its limit bounds memory per key. */
export const MAX_LOG_LIMIT = 100_000;

export const slidingLogSchema = lazyRuleSchema((z, { count, windowMs, common }) =>
  z.object({ policy: z.literal('sliding_window_log'), limit: count(MAX_LOG_LIMIT), windowMs, ...common }).strict(),
);
export type SlidingLogRule = Zod.infer<typeof slidingLogSchema>;
