// GCRA's rule: as the token bucket's, `capacity` units refilled at
// `refillPerSecond`, an empty bucket full again within 366 days.
import type { z as Zod } from 'zod';
import { lazyRuleSchema, refillSchemaOf } from '../rule-fields.js';

export const gcraSchema = lazyRuleSchema((z, fields) => refillSchemaOf(z, fields, 'gcra'));
export type GcraRule = Zod.infer<typeof gcraSchema>;
