// The resolvers the gateway reads: from the rule cache when a rule store runs
// (its keys first, then the config file's), else from the config file alone.
import { ConfigRuleResolver } from './config-rules.js';
import type { RuleCache } from './cache/rule-cache.js';
import { configKeyTable, type KeyTable, KeyTenantResolver } from './tenant-resolver.js';
import type { RuleResolver, RulesConfig, TenantResolver } from './types.js';

export interface Resolvers {
  rules: RuleResolver;
  tenants: TenantResolver;
}

export function resolversFor(config: RulesConfig, cache?: RuleCache): Resolvers {
  const tables: KeyTable[] = cache ? [cache] : [];
  if (config.tenants.keys.length > 0) tables.push(configKeyTable(config.tenants.keys));
  return {
    rules: cache ?? new ConfigRuleResolver(config.rules, config.defaultRule),
    tenants: new KeyTenantResolver(tables, config.tenants.unknownKeys),
  };
}
