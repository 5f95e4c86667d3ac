// A limit's `cost:` and `count:` as the gateway uses them, checked against its
// rule: each error names its field (the loader adds the file and line).
import { capacityOf, type Rule } from '../policies/rule.js';
import type { CountEntry, UsageCostEntry } from './schema.js';
import type { CountRule, UsageCost } from './types.js';

type Path = (string | number)[];
type Fail = (path: Path, message: string) => never;

export interface LimitUsage {
  readonly usage?: UsageCost;
  readonly count?: CountRule;
}

/** The limit's usage pricing and counting, or nothing when it has neither. */
export function checkLimitUsage(entry: { cost?: UsageCostEntry | undefined; count?: CountEntry | undefined }, rule: Rule | undefined, at: Path, fail: Fail): LimitUsage {
  const out: { usage?: UsageCost; count?: CountRule } = {};
  if (entry.cost !== undefined) out.usage = usageOf(entry.cost, rule, [...at, 'cost'], fail);
  if (entry.count !== undefined) out.count = countOf(entry.count);
  return out;
}

function usageOf(cost: UsageCostEntry, rule: Rule | undefined, at: Path, fail: Fail): UsageCost {
  const fixed = typeof cost.estimate === 'number';
  const estimate: UsageCost['estimate'] = typeof cost.estimate === 'number' ? { fixed: cost.estimate } : { fromBody: cost.estimate.fromBody.split('.'), default: cost.estimate.default };
  const base = typeof cost.estimate === 'number' ? cost.estimate : cost.estimate.default;
  const where = fixed ? [...at, 'estimate'] : [...at, 'estimate', 'default'];
  if (base < 1) fail(where, 'must be at least 1: a reservation takes at least one unit');
  // A rule from the rule store is checked per request: an estimate above its capacity is reserved as the whole capacity.
  if (rule !== undefined && base > capacityOf(rule)) fail(where, `must be at most ${capacityOf(rule)}, the capacity of the limit's rule: a request reserving more could never pass`);
  const from = 'header' in cost.from ? { kind: 'header' as const, header: cost.from.header.toLowerCase() } : { kind: 'json' as const, path: cost.from.json.split('.') };
  return { estimate, from, fallback: cost.fallback ?? base };
}

/** A `count:` entry (`{ status }` or `{ skipStatus }`) as the rule the settlement reads. */
export function countOf(count: CountEntry): CountRule {
  const only = 'status' in count;
  const listed = only ? count.status : count.skipStatus;
  const statuses = new Set<number>();
  const classes = new Set<number>();
  for (const item of listed) {
    if (typeof item === 'number') statuses.add(item);
    else classes.add(Number(item[0]));
  }
  return { only, statuses, classes };
}
