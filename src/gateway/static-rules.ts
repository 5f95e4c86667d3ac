// The rule resolver built from the config's `rules` and `defaultRule`: a few map
// lookups, most specific first (tenant×route, tenant×*, *×route, default).
import type { SeedRule } from '../config/types.js';
import { type Rule, ruleFingerprint } from '../core/rule.js';
import { ANY, type ResolvedRule, type RuleResolver } from '../rules/types.js';

export class StaticRuleResolver implements RuleResolver {
  private readonly rules = new Map<string, ResolvedRule>();
  private readonly fallback: ResolvedRule;

  constructor(rules: readonly SeedRule[], defaultRule: Rule) {
    for (const { tenant, route, rule } of rules) {
      const match = tenant === ANY ? 'any-route' : route === ANY ? 'tenant-any' : 'tenant-route';
      this.rules.set(pairKey(tenant, route), Object.freeze({ rule, match, version: ruleFingerprint(rule) }));
    }
    this.fallback = Object.freeze({ rule: defaultRule, match: 'default', version: ruleFingerprint(defaultRule) });
  }

  resolve(tenant: string, route: string): ResolvedRule {
    if (this.rules.size === 0) return this.fallback;
    return (
      this.rules.get(pairKey(tenant, route)) ??
      this.rules.get(pairKey(tenant, ANY)) ??
      this.rules.get(pairKey(ANY, route)) ??
      this.rules.get(pairKey(ANY, ANY)) ??
      this.fallback
    );
  }
}

// Ids never contain a space, so it cannot make two pairs collide.
const pairKey = (tenant: string, route: string) => `${tenant} ${route}`;
