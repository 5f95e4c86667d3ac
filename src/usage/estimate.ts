// What a limit priced by usage reserves before the request is forwarded: its
// fixed estimate, or a number its JSON body names (an LLM's `max_tokens`),
// never more than the rule's capacity (the settle charges the rest as a debt).
import { capacityOf, type Rule } from '../policies/rule.js';
import { valueAt } from './json-path.js';
import type { UsageCost } from './types.js';

export function estimateOf(usage: UsageCost, json: unknown, rule: Rule): number {
  const capacity = capacityOf(rule);
  const { estimate } = usage;
  let units = 'fixed' in estimate ? estimate.fixed : estimate.default;
  if ('fromBody' in estimate) {
    const asked = valueAt(json, estimate.fromBody);
    if (typeof asked === 'number' && Number.isFinite(asked) && asked >= 0) units = Math.ceil(asked);
  }
  return Math.min(capacity, Math.max(1, units));
}
