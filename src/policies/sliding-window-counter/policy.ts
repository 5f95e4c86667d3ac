// The sliding counter's registry entry: its model, its Lua twin, its rule
// and what the rest of Sluice asks of it (policies/entry.ts).
import type { PolicyEntry } from '../entry.js';
import { slidingWindowCounter } from './model.js';
import { type SlidingCounterRule, slidingCounterSchema } from './rule.js';

export const slidingWindowCounterPolicy: PolicyEntry<SlidingCounterRule> = {
  policy: 'sliding_window_counter',
  schema: slidingCounterSchema,
  model: slidingWindowCounter,
  lua: new URL('./sliding-window-counter.lua', import.meta.url),
  adjustLua: new URL('./adjust.lua', import.meta.url),
  carry: 'window',
  slidingWindow: true,
  leasable: true,
  capacity: (rule) => rule.limit,
  formFields: [
    { name: 'limit', label: 'Limit' },
    { name: 'windowMs', label: 'Window (ms)' },
  ],
};
