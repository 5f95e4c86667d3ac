// The leaky bucket's registry entry: its model, its Lua twin, its rule and
// what the rest of Sluice asks of it (policies/entry.ts). It shapes (delays
// requests instead of admitting them in advance), so it cannot lease.
import type { PolicyEntry } from '../entry.js';
import { TAT_ADJUST_LUA } from '../tat.js';
import { leakyBucket } from './model.js';
import { type LeakyBucketRule, leakyBucketSchema } from './rule.js';

export const leakyBucketPolicy: PolicyEntry<LeakyBucketRule> = {
  policy: 'leaky_bucket',
  schema: leakyBucketSchema,
  model: leakyBucket,
  lua: new URL('./leaky-bucket.lua', import.meta.url),
  adjustLua: TAT_ADJUST_LUA,
  carry: 'time',
  leasable: false,
  capacity: (rule) => rule.burst + 1,
  formFields: [
    { name: 'ratePerSecond', label: 'Rate per second' },
    { name: 'burst', label: 'Burst' },
  ],
};
