// GCRA's registry entry: its model, its Lua twin, its rule and what the rest
// of Sluice asks of it (policies/entry.ts).
import type { PolicyEntry } from '../entry.js';
import { TAT_ADJUST_LUA } from '../tat.js';
import { gcra } from './model.js';
import { type GcraRule, gcraSchema } from './rule.js';

export const gcraPolicy: PolicyEntry<GcraRule> = {
  policy: 'gcra',
  schema: gcraSchema,
  model: gcra,
  lua: new URL('./gcra.lua', import.meta.url),
  adjustLua: TAT_ADJUST_LUA,
  carry: 'time',
  leasable: true,
  capacity: (rule) => rule.capacity,
  formFields: [
    { name: 'capacity', label: 'Capacity' },
    { name: 'refillPerSecond', label: 'Refill per second' },
  ],
};
