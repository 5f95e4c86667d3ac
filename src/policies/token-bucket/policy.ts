// The token bucket's registry entry: its model, its Lua twin, its rule and
// what the rest of Sluice asks of it (policies/entry.ts).
import type { PolicyEntry } from '../entry.js';
import { tokenBucket } from './model.js';
import { type TokenBucketRule, tokenBucketSchema } from './rule.js';

export const tokenBucketPolicy: PolicyEntry<TokenBucketRule> = {
  policy: 'token_bucket',
  schema: tokenBucketSchema,
  model: tokenBucket,
  lua: new URL('./token-bucket.lua', import.meta.url),
  adjustLua: new URL('./adjust.lua', import.meta.url),
  carry: 'time',
  leasable: true,
  capacity: (rule) => rule.capacity,
  formFields: [
    { name: 'capacity', label: 'Capacity' },
    { name: 'refillPerSecond', label: 'Refill per second' },
  ],
};
