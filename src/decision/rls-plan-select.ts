// A plan selected from an Envoy descriptor (docs/plans.md#envoy): an entry
// `plan` whose value names a plan in the rule store makes that plan's limit
// decide the descriptor (its limit of the matched limit's name, else of the
// domain as a route, else its global one). Planning stays a pure function of
// the descriptor (and is kept in the plan caches); the plan's rule is read at
// decision time, an O(1) lookup, so a changed plan applies at once. The bucket
// hashes the other entries (never the plan's name): a caller moved to another
// plan keeps its bucket. A value naming no plan leaves the descriptor as the
// reference decides it.
import { createHash } from 'node:crypto';
import { derivedId } from '../core/ids.js';
import type { ResolvedRule } from '../rules/types.js';
import type { Match } from './descriptor-tree.js';
import type { CheckedDescriptor } from './rls-request.js';

export const PLAN_ENTRY = 'plan';

export interface PlanSelector {
  readonly plan: string;
  readonly domain: string;
  /** The configured limit's name the descriptor matched, if any: a plan's limit of that id comes first. */
  readonly limitName: string | undefined;
  /** The descriptor's bucket under any plan. */
  readonly tag: string;
  /** No configured limit matched: without the plan, the descriptor has no limit. */
  readonly alone: boolean;
}

/** What the decider looks a plan's rule up with (the rule cache). */
export type PlanRules = (plan: string, route: string, limitId: string | undefined) => ResolvedRule | undefined;

export function planSelectorOf(domain: string, descriptor: CheckedDescriptor, match: Match | undefined): PlanSelector | undefined {
  if (descriptor.override) return undefined;
  const entry = descriptor.entries.find((e) => e.key === PLAN_ENTRY);
  if (entry === undefined || entry.value === '') return undefined;
  const others = descriptor.entries.filter((e) => e !== entry).map((e) => [e.key, e.value]);
  const tag = derivedId('rls.', createHash('sha256').update(JSON.stringify([domain, others, PLAN_ENTRY])).digest('hex').slice(0, 32));
  return { plan: entry.value, domain, limitName: match?.limit.name, tag, alone: match === undefined };
}
