// The token bucket's rule: `capacity` tokens refilled at `refillPerSecond`,
// an empty bucket full again within 366 days.
import type { z as Zod } from 'zod';
import { lazyRuleSchema, refillSchemaOf } from '../rule-fields.js';

export const tokenBucketSchema = lazyRuleSchema((z, fields) => refillSchemaOf(z, fields, 'token_bucket'));
export type TokenBucketRule = Zod.infer<typeof tokenBucketSchema>;
