// Contracts between the rule store (PostgreSQL or embedded), the in-memory rule
// cache that the hot path reads, and the gateway. The hot path only ever calls
// `RuleResolver.resolve` and `TenantResolver.tenantFor`: both O(1), no I/O.
import type { Rule } from '../core/rule.js';
import type { OverrideSet } from './override-set.js';

/** `*` as a route id means every route of the tenant; as a tenant id, every tenant. */
export const ANY = '*';

export interface StoredRule {
  tenant: string; // a tenant id or ANY
  route: string; // a route id or ANY
  rule: Rule;
  updatedAt: string; // ISO timestamp
}

/** Which entry matched, most specific first. */
export type RuleMatch = 'tenant-route' | 'tenant-any' | 'any-route' | 'default';

export interface ResolvedRule {
  rule: Rule;
  match: RuleMatch;
  /** Changes whenever this rule's parameters change; caches keyed by it see a new limit at once. */
  version: string;
}

/** A per-key override of a limit's rule (override-selector.ts for the selector's forms). */
export interface StoredOverride {
  limitId: string;
  /** Canonical selector text: `tenant:ID`, `ip:ADDRESS[/LEN]` or `header:~h.<hash>`. */
  selector: string;
  rule: Rule;
  updatedAt: string; // ISO timestamp
}

export interface RuleResolver {
  /** tenant × route, then tenant × any route, then any tenant × route, then the default rule. */
  resolve(tenant: string, route: string): ResolvedRule;
  /** The per-key overrides in memory (a rule store's); none when absent. */
  overrides?(): OverrideSet;
}

export interface TenantResolver {
  /**
   * The tenant an API key belongs to. An unknown or revoked key gives undefined,
   * or under `unknownKeys: default-rule` a `~…` tenant of its own (anonymous-tenant.ts).
   */
  tenantFor(apiKey: string): string | undefined;
}
