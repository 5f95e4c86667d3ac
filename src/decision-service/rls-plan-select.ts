// A plan or a tenant selected from an Envoy descriptor (docs/plans.md#envoy,
// docs/decision-service.md#tenants-from-descriptors). An entry `plan` whose
// value names a plan in the rule store makes that plan's limit decide the
// descriptor (its limit of the matched limit's name, else of the domain as a
// route, else its global one). An entry `tenant` (a JWT claim Envoy's
// jwt_authn put in a header, sent by a request_headers action) makes the
// tenant's rules decide it as the gateway would: its override of the matched
// limit, its own rule of the domain as a route, then its plan (the `plan`
// entry's, else its assignment). Planning stays a pure function of the
// descriptor (and is kept in the plan caches); the rule is read at decision
// time, an O(1) lookup, so a changed rule or plan applies at once. The bucket
// hashes the other entries (the tenant's value among them, never the plan's
// name): a caller moved to another plan keeps its bucket. A value naming no
// plan, or a tenant with nothing of its own, leaves the descriptor as the
// reference decides it.
import { createHash } from 'node:crypto';
import { derivedId, isValidId } from '../core/ids.js';
import type { ResolvedRule } from '../rules/types.js';
import type { Match } from './descriptor-tree.js';
import type { CheckedDescriptor } from './rls-request.js';

export const PLAN_ENTRY = 'plan';
export const TENANT_ENTRY = 'tenant';

export interface PlanSelector {
  /** The `plan` entry's value; with a tenant, the plan it asks for before the tenant's assignment. */
  readonly plan: string | undefined;
  /** The `tenant` entry's value, when it is a tenant id. */
  readonly tenant: string | undefined;
  readonly domain: string;
  /** The configured limit's name the descriptor matched, if any: a plan's limit of that id comes first. */
  readonly limitName: string | undefined;
  /** The descriptor's bucket under any plan. */
  readonly tag: string;
  /** No configured limit matched: without the plan, the descriptor has no limit. */
  readonly alone: boolean;
}

/** What the decider looks a selected rule up with (the rule cache). */
export interface PlanRules {
  /** A plan's limit by the plan's name: of the limit id, else the route, else global. */
  plan(plan: string, route: string, limitId: string | undefined): ResolvedRule | undefined;
  /** The tenant's own rule (override, tenant × route, its plan's); undefined when only the defaults would apply. */
  tenant(tenant: string, route: string, limitId: string | undefined, plan: string | undefined): ResolvedRule | undefined;
}

export function planSelectorOf(domain: string, descriptor: CheckedDescriptor, match: Match | undefined): PlanSelector | undefined {
  if (descriptor.override) return undefined;
  const planEntry = descriptor.entries.find((e) => e.key === PLAN_ENTRY && e.value !== '');
  const tenant = descriptor.entries.find((e) => e.key === TENANT_ENTRY && isTenantId(e.value))?.value;
  if (planEntry === undefined && tenant === undefined) return undefined;
  // Without the plan's name, so a caller moved to another plan keeps its bucket (the tenant's value stays in).
  const others = descriptor.entries.filter((e) => e !== planEntry).map((e) => [e.key, e.value]);
  const tag = derivedId('rls.', createHash('sha256').update(JSON.stringify([domain, others, PLAN_ENTRY])).digest('hex').slice(0, 32));
  return { plan: planEntry?.value, tenant, domain, limitName: match?.limit.name, tag, alone: match === undefined };
}

/** The rule a selector picks, or undefined (the descriptor is decided as configured). */
export function selectedRule(selector: PlanSelector, rules: PlanRules): ResolvedRule | undefined {
  const { plan, tenant, domain, limitName } = selector;
  if (tenant !== undefined) return rules.tenant(tenant, domain, limitName, plan);
  return plan === undefined ? undefined : rules.plan(plan, domain, limitName);
}

/** A tenant id as the rule store keeps them (`~` starts the gateway's own derived ids: never a tenant). */
const isTenantId = (value: string) => isValidId(value) && !value.startsWith('~');
