// Plans in memory, as the hot path reads them: plan name → its limits indexed
// by route, by limit id and global, and subject → plan name for tenants and API
// keys. A lookup is two map reads whatever the number of tenants (100,000
// tenants on 5 plans hold 5 plan indexes and 100,000 short map entries, not a
// rule per tenant). Built once per load, changed per plan or per assignment,
// swapped in whole with the rule set.
import { ruleFingerprint } from '../policies/rule.js';
import type { PlanAssignment, PlanSubject, StoredPlan } from './plans.js';
import type { ResolvedRule } from './types.js';

export interface PlanIndex {
  readonly name: string;
  readonly routes: ReadonlyMap<string, ResolvedRule>;
  readonly limits: ReadonlyMap<string, ResolvedRule>;
  readonly global: ResolvedRule | undefined;
}

export interface PlanSet {
  readonly plans: ReadonlyMap<string, PlanIndex>;
  /** The stored plans, for snapshots and the admin API. */
  readonly stored: ReadonlyMap<string, StoredPlan>;
  /** subject\0id → plan name. */
  readonly assignments: ReadonlyMap<string, string>;
}

export const assignmentKey = (subject: PlanSubject, id: string): string => `${subject}\u0000${id}`;

export interface PlanSetChanges {
  plans: Map<string, StoredPlan | undefined>; // plan name → new value, undefined = deleted
  assignments: Map<string, PlanAssignment | undefined>; // assignmentKey → new value, undefined = unassigned
}

function indexPlan(plan: StoredPlan): PlanIndex {
  const routes = new Map<string, ResolvedRule>();
  const limits = new Map<string, ResolvedRule>();
  let global: ResolvedRule | undefined;
  for (const limit of plan.limits) {
    const resolved: ResolvedRule = Object.freeze({ rule: limit.rule, match: 'plan' as const, plan: plan.name, version: ruleFingerprint(limit.rule) });
    if (limit.scope === 'global') global = resolved;
    else (limit.scope === 'route' ? routes : limits).set(limit.target, resolved);
  }
  return { name: plan.name, routes, limits, global };
}

export function buildPlanSet(plans: readonly StoredPlan[], assignments: readonly PlanAssignment[]): PlanSet {
  return {
    plans: new Map(plans.map((plan) => [plan.name, indexPlan(plan)])),
    stored: new Map(plans.map((plan) => [plan.name, plan])),
    assignments: new Map(assignments.map((a) => [assignmentKey(a.subject, a.id), a.plan])),
  };
}

export const EMPTY_PLANS: PlanSet = buildPlanSet([], []);

/** A new set with `changes` applied; an unchanged part is shared with `base`. */
export function applyPlanChanges(base: PlanSet, changes: PlanSetChanges): PlanSet {
  let { plans, stored, assignments } = base;
  if (changes.plans.size > 0) {
    const nextPlans = new Map(plans);
    const nextStored = new Map(stored);
    for (const [name, plan] of changes.plans) {
      if (plan) {
        nextPlans.set(name, indexPlan(plan));
        nextStored.set(name, plan);
      } else {
        nextPlans.delete(name);
        nextStored.delete(name);
      }
    }
    [plans, stored] = [nextPlans, nextStored];
  }
  if (changes.assignments.size > 0) {
    const next = new Map(assignments);
    for (const [key, assignment] of changes.assignments) {
      if (assignment) next.set(key, assignment.plan);
      else next.delete(key);
    }
    assignments = next;
  }
  return { plans, stored, assignments };
}

/**
 * The plan that applies: the one the request names (a JWT's plan claim, an API
 * key's own plan, an Envoy descriptor's `plan` entry) when it exists, else the
 * tenant's.
 */
export function planOf(set: PlanSet, tenant: string | undefined, named: string | undefined): PlanIndex | undefined {
  if (set.plans.size === 0) return undefined;
  const byName = named === undefined ? undefined : set.plans.get(named);
  if (byName) return byName;
  const assigned = tenant === undefined ? undefined : set.assignments.get(assignmentKey('tenant', tenant));
  return assigned === undefined ? undefined : set.plans.get(assigned);
}

/** The plan's limit for a limit id, then for the route, then its global one. */
export function planRule(plan: PlanIndex, route: string, limitId: string | undefined): ResolvedRule | undefined {
  return (limitId === undefined ? undefined : plan.limits.get(limitId)) ?? plan.routes.get(route) ?? plan.global;
}
