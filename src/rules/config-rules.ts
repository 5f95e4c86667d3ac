// The rule resolver when there is no rule store: the config file's `rules` and
// `defaultRule`, in the same table and with the same lookup as the rule cache.
import type { Rule } from '../policies/rule.js';
import { defaultResolved, lookupRule, resolvedOf, ruleKey } from './rule-set.js';
import type { ResolvedRule, RuleResolver, SeedRule } from './types.js';

export class ConfigRuleResolver implements RuleResolver {
  private readonly rules: ReadonlyMap<string, ResolvedRule>;
  private readonly fallback: ResolvedRule;

  constructor(rules: readonly SeedRule[], defaultRule: Rule) {
    this.rules = new Map(rules.map((entry) => [ruleKey(entry.tenant, entry.route), resolvedOf(entry)]));
    this.fallback = defaultResolved(defaultRule);
  }

  resolve(tenant: string, route: string): ResolvedRule {
    return lookupRule(this.rules, tenant, route) ?? this.fallback;
  }
}
