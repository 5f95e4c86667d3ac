// Contracts between the rule store (PostgreSQL or embedded), the in-memory rule
// cache that the hot path reads, and the gateway. The hot path only ever calls
// `RuleResolver.resolve` and `TenantResolver.tenantFor`: both O(1), no I/O.
import type { Rule } from '../policies/rule.js';

/** `*` as a route id means every route of the tenant; as a tenant id, every tenant. */
export const ANY = '*';

export interface StoredRule {
  tenant: string; // a tenant id or ANY
  route: string; // a route id or ANY
  rule: Rule;
  updatedAt: string; // ISO timestamp
}

/** Which entry matched, most specific first. */
export type RuleMatch = 'tenant-route' | 'tenant-any' | 'plan' | 'any-route' | 'default';

export interface ResolvedRule {
  rule: Rule;
  match: RuleMatch;
  /** Changes whenever this rule's parameters change; caches keyed by it see a new limit at once. */
  version: string;
  /** The plan whose limit this is (match `plan`). */
  plan?: string;
}

/** A per-key override of a limit's rule (override-selector.ts for the selector's forms). */
export interface StoredOverride {
  limitId: string;
  /** Canonical selector text: `tenant:ID`, `ip:ADDRESS[/LEN]` or `header:~h.<hash>`. */
  selector: string;
  rule: Rule;
  updatedAt: string; // ISO timestamp
}

/** What a lookup knows of the request beyond its tenant and route (docs/plans.md). */
export interface ResolveContext {
  /** The plan the request names (a JWT claim, its API key's plan, an Envoy descriptor): used when it exists, else the tenant's. */
  readonly plan?: string | undefined;
  /** The limit being resolved: a plan's limit for this id comes before its route and global ones. */
  readonly limitId?: string | undefined;
}

export interface RuleResolver {
  /** tenant × route, then tenant × any route, then the tenant's plan, then any tenant × route, then the default rule. */
  resolve(tenant: string, route: string, context?: ResolveContext): ResolvedRule;
  /** A plan's limit of this limit id (over a limit's inline rule); undefined without plans. */
  planLimit?(tenant: string | undefined, limitId: string, plan: string | undefined): ResolvedRule | undefined;
  /** A plan's limit by the plan's name alone (an Envoy descriptor's `plan` entry): of the limit id, else the route, else global. */
  planRule?(plan: string, route: string, limitId: string | undefined): ResolvedRule | undefined;
  /** The per-key overrides in memory (a rule store's); none when absent. */
  overrides?(): OverrideSet;
}

/** Who an API key names: its tenant and, when the key has one of its own, its plan (docs/plans.md). */
export interface KeyOwner {
  readonly tenant: string;
  /** A JWT's plan claim, or the API key's own plan; resolution uses it when that plan exists, else the tenant's. */
  readonly plan?: string;
}

export interface TenantResolver {
  /**
   * The tenant an API key belongs to. An unknown or revoked key gives undefined,
   * or under `unknownKeys: default-rule` a `~…` tenant of its own (anonymous-tenant.ts).
   */
  tenantFor(apiKey: string): string | undefined;
  /** The tenant with the key's own plan, when the resolver knows plans; tenantFor's answer otherwise. */
  identityFor?(apiKey: string): KeyOwner | undefined;
}

// The config file's rules and keys, as config/types.ts carries them.
export interface TenantKey {
  /** Hex SHA-256 of the API key; the key itself is never kept. */
  readonly keyHash: string;
  readonly tenant: string;
}

export interface SeedRule {
  /** A tenant id or `*`. */
  readonly tenant: string;
  /** A route id or `*`. */
  readonly route: string;
  readonly rule: Rule;
}

/** What the resolvers read of the loaded config (SluiceConfig has it). */
export interface RulesConfig {
  readonly rules: readonly SeedRule[];
  readonly defaultRule: Rule;
  readonly tenants: { readonly unknownKeys: 'reject' | 'default-rule'; readonly keys: readonly TenantKey[] };
}

// The overrides indexed in memory (override-set.ts builds them).
/** Networks of one family, by prefix length; `lengths` longest first. */
export interface PrefixTable {
  readonly lengths: readonly number[];
  readonly byLength: ReadonlyMap<number, ReadonlyMap<number | string, Rule>>;
}

export interface LimitOverrides {
  readonly tenants: ReadonlyMap<string, Rule>;
  readonly headers: ReadonlyMap<string, Rule>;
  readonly ipv4: PrefixTable;
  readonly ipv6: PrefixTable;
}

export interface OverrideSet {
  /** limit id → its overrides, indexed. */
  readonly byLimit: ReadonlyMap<string, LimitOverrides>;
  /** limitId\0selector → the stored override, for snapshots and counts. */
  readonly stored: ReadonlyMap<string, StoredOverride>;
}
