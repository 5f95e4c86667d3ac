// The sliding counter's rule: about `limit` units in any `windowMs` (the
// previous window's count weighted by its overlap).
import type { z as Zod } from 'zod';
import { lazyRuleSchema } from '../rule-fields.js';

export const slidingCounterSchema = lazyRuleSchema((z, { count, windowMs, common }) =>
  z.object({ policy: z.literal('sliding_window_counter'), limit: count(), windowMs, ...common }).strict(),
);
export type SlidingCounterRule = Zod.infer<typeof slidingCounterSchema>;
