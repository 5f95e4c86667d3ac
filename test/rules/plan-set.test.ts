// The plans in memory (plan-set.ts) and the lookup with them (rule-set.ts
// lookupWithPlan): precedence own rule > plan (limit id, route, global) >
// defaults; the plan a request names over the key's and the tenant's; and a
// plan's change that leaves the tenant → plan map as it is (shared, not copied).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Rule } from '../../src/policies/rule.js';
import { applyPlanChanges, buildPlanSet, planOf } from '../../src/rules/plan-set.js';
import type { PlanAssignment, PlanLimit, StoredPlan } from '../../src/rules/plans.js';
import { buildRuleSet, lookupWithPlan } from '../../src/rules/rule-set.js';
import type { StoredRule } from '../../src/rules/types.js';

const tb = (capacity: number): Rule => ({ policy: 'token_bucket', capacity, refillPerSecond: 1 });
const limit = (plan: string, scope: PlanLimit['scope'], target: string, capacity: number): PlanLimit => ({ plan, scope, target, rule: tb(capacity), updatedAt: '' });
const plan = (name: string, limits: PlanLimit[]): StoredPlan => ({ name, createdAt: '', limits });
const rule = (tenant: string, route: string, capacity: number): StoredRule => ({ tenant, route, rule: tb(capacity), updatedAt: '' });
const on = (id: string, name: string, subject: PlanAssignment['subject'] = 'tenant'): PlanAssignment => ({ subject, id, plan: name, updatedAt: '' });

const plans = buildPlanSet(
  [plan('free', [limit('free', 'global', '*', 5), limit('free', 'route', 'orders', 3), limit('free', 'limit', 'orders-burst', 2)]), plan('pro', [limit('pro', 'global', '*', 50)])],
  [on('acme', 'free'), on('big', 'pro')],
);
const set = buildRuleSet([rule('acme', 'search', 7), rule('*', 'reports', 30), rule('*', '*', 40)], [], { plans });
const capacity = (tenant: string, route: string, context?: { plan?: string; limitId?: string }) => {
  const found = lookupWithPlan(set, tenant, route, context);
  return [(found?.rule as { capacity: number } | undefined)?.capacity, found?.match, found?.plan];
};

describe('plans in memory', () => {
  it("resolves the tenant's own rule, then its plan's limit (id, route, global), then the defaults", () => {
    assert.deepEqual(capacity('acme', 'search'), [7, 'tenant-route', undefined], 'own rule first');
    assert.deepEqual(capacity('acme', 'orders', { limitId: 'orders-burst' }), [2, 'plan', 'free'], 'the limit id');
    assert.deepEqual(capacity('acme', 'orders'), [3, 'plan', 'free'], 'the route');
    assert.deepEqual(capacity('acme', 'reports'), [5, 'plan', 'free'], 'the global one, over * × route');
    assert.deepEqual(capacity('nobody', 'reports'), [30, 'any-route', undefined]);
    assert.deepEqual(capacity('nobody', 'x'), [40, 'default', undefined]);
  });

  it('takes the plan the request names when it exists, else the tenant’s', () => {
    assert.deepEqual(capacity('acme', 'reports', { plan: 'pro' }), [50, 'plan', 'pro']);
    assert.deepEqual(capacity('acme', 'reports', { plan: 'gold' }), [5, 'plan', 'free']);
    assert.equal(planOf(set.plans, undefined, 'pro')?.name, 'pro', 'no tenant (an anonymous route, an Envoy descriptor)');
    assert.equal(planOf(set.plans, undefined, undefined), undefined);
  });

  it("changes a plan without copying who is on it, and moves one tenant by one entry", () => {
    const changed = applyPlanChanges(plans, { plans: new Map([['free', plan('free', [limit('free', 'global', '*', 9)])]]), assignments: new Map() });
    assert.equal(changed.assignments, plans.assignments, 'the tenant → plan map is shared');
    assert.equal(changed.plans.get('free')?.global?.rule, changed.stored.get('free')?.limits[0]?.rule);
    const moved = applyPlanChanges(changed, { plans: new Map(), assignments: new Map([['tenant\u0000acme', on('acme', 'pro')]]) });
    assert.equal(moved.plans, changed.plans, 'the plans are shared');
    assert.equal(planOf(moved, 'acme', undefined)?.name, 'pro');
    const off = applyPlanChanges(moved, { plans: new Map([['pro', undefined]]), assignments: new Map([['tenant\u0000big', undefined]]) });
    assert.equal(planOf(off, 'big', undefined), undefined);
    assert.equal(planOf(off, 'acme', undefined), undefined, 'a deleted plan applies to nobody');
  });
});
