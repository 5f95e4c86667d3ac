// What the decision service's listeners decide with, built from one config:
// the Envoy decider (domains, header options) and forward-auth (routes, their
// limits). A reload builds new ones and swaps them whole; the listeners read
// them per request, so no connection is dropped.
import type { Logger } from 'pino';
import type { SluiceConfig } from '../config/types.js';
import { ForwardAuth } from './forward-auth.js';
import { RateLimitDecider } from './rls.js';
import type { PlanRules } from './rls-plan-select.js';
import type { DecisionDeps } from './engine-and-resolvers.js';
import type { RuleMatch } from '../rules/types.js';
import type { Outcome } from './rls-status.js';
import { CombinedLists, type ListChecker, ListSet } from '../lists/list-set.js';

export interface Deciders {
  decider: RateLimitDecider;
  /** Undefined without routes (`sluice ratelimit`): /decide is then a 404, as on the reference, which has no such endpoint. */
  forwardAuth: ForwardAuth | undefined;
}

export function buildDeciders(config: SluiceConfig, deps: DecisionDeps): Deciders {
  const debug = deps.logger.isLevelEnabled('debug');
  const observe = deps.observer || debug ? (outcomes: readonly Outcome[]) => {
    deps.observer?.descriptors(outcomes);
    if (debug) logDescriptors(deps.logger, outcomes);
  } : undefined;
  return {
    decider: new RateLimitDecider(config.decisionService.domains, deps.engine, config.headers, { shadowMode: config.decisionService.shadowMode, observe, planRules: planRulesOf(deps), lists: listsOf(config, deps) }),
    forwardAuth: config.routes.length === 0 ? undefined : new ForwardAuth({ config, ...deps }),
  };
}

/** The config file's lists with the rule store's, as forward-auth reads them; undefined when neither can hold an entry. */
function listsOf(config: SluiceConfig, deps: DecisionDeps): ListChecker | undefined {
  const configLists = new ListSet(config.lists);
  if (deps.storedLists === undefined) return configLists.size === 0 ? undefined : configLists;
  return new CombinedLists([() => configLists, deps.storedLists]);
}

/** Matches of a tenant's own: the defaults (any tenant × route, the default rule) are not. */
const TENANT_MATCHES: ReadonlySet<RuleMatch> = new Set(['tenant-route', 'tenant-any', 'plan']);

/** Plans and tenants' rules from the rule store, when one runs (docs/plans.md#envoy). */
function planRulesOf(deps: DecisionDeps): PlanRules | undefined {
  const { rules } = deps;
  if (rules.planRule === undefined) return undefined;
  return {
    plan: (plan, route, limitId) => rules.planRule?.(plan, route, limitId),
    tenant: (tenant, route, limitId, plan) => {
      const override = limitId === undefined ? undefined : rules.overrides?.().byLimit.get(limitId)?.tenants.get(tenant);
      if (override !== undefined) return { rule: override, match: 'tenant-route', version: 'override' };
      const resolved = rules.resolve(tenant, route, { plan, limitId });
      return TENANT_MATCHES.has(resolved.match) ? resolved : undefined;
    },
  };
}

/**
 * LOG_LEVEL=debug, as the reference logs each request: per limited descriptor
 * its limit, hits and its buckets' keys. The keys are hashes and the stat key
 * (which carries values under detailed_metric) is left out: no descriptor
 * value reaches the log.
 */
function logDescriptors(logger: Logger, outcomes: readonly Outcome[]): void {
  for (const { plan, over } of outcomes) {
    logger.debug({ limit: plan.reported, hits: plan.hits, cacheKeys: plan.calls.map(({ bucket }) => `${bucket.tag}.${bucket.name}`), over }, 'descriptor decided');
  }
}
