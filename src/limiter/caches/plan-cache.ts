// Plans of unsharded rules, kept per route and tenant. The gateway asks for the
// same (tenant, route, rule) on every request, and its plan (two key strings,
// two id checks, the region-scaled rule, its fingerprint) comes out the same
// each time, a visible share of a proxied request's CPU at saturation (--cpu-prof).
// A kept plan is used only for the same rule object at the same region share,
// so a reload (new rule objects) or a moved share plans anew. Plans are shared
// between decisions: nothing downstream writes to one (Plan's fields are readonly).
import type { Rule } from '../../core/rule.js';
import { type Plan, planFor } from '../engine/plan.js';
import { scaleRule } from '../engine/scale-rule.js';

/** Plans kept in all; past it the cache starts over, so a flood of derived ids (one per client address) cannot grow it. */
export const MAX_PLANS = 10_000;

export class PlanCache {
  /** route → tenant → plan: routes are few, and two lookups spare a joined key per call. */
  private readonly byRoute = new Map<string, Map<string, Plan>>();
  private size = 0;

  plan(tenant: string, route: string, rule: Rule, regionShare: number): Plan {
    if (rule.shards !== undefined) return planFor(tenant, route, rule, regionShare); // a random shard per call
    let byTenant = this.byRoute.get(route);
    const kept = byTenant?.get(tenant);
    if (kept !== undefined && kept.original === rule && kept.regionalRule === scaleRule(rule, regionShare)) return kept;
    const plan = planFor(tenant, route, rule, regionShare);
    if (this.size >= MAX_PLANS) {
      this.byRoute.clear();
      this.size = 0;
      byTenant = undefined;
    }
    if (byTenant === undefined) {
      byTenant = new Map();
      this.byRoute.set(route, byTenant);
    }
    if (!byTenant.has(tenant)) this.size++;
    byTenant.set(tenant, plan);
    return plan;
  }

  get plans(): number {
    return this.size;
  }
}
