// The sliding log's registry entry: its model, its Lua twin, its rule and
// what the rest of Sluice asks of it (policies/entry.ts). Its state is a
// sorted set, a Redis key of its own.
import type { PolicyEntry } from '../entry.js';
import { slidingWindowLog } from './model.js';
import { type SlidingLogRule, slidingLogSchema } from './rule.js';

export const slidingWindowLogPolicy: PolicyEntry<SlidingLogRule> = {
  policy: 'sliding_window_log',
  schema: slidingLogSchema,
  model: slidingWindowLog,
  lua: new URL('./sliding-window-log.lua', import.meta.url),
  adjustLua: new URL('./adjust.lua', import.meta.url),
  carry: 'window',
  slidingWindow: true,
  ownKey: true,
  leasable: true,
  capacity: (rule) => rule.limit,
  formFields: [
    { name: 'limit', label: 'Limit' },
    { name: 'windowMs', label: 'Window (ms)' },
  ],
};
