// The limits model: a route lists its limits; each names where its bucket's
// identity comes from (the key source) and, unless the rule store provides it,
// its rule. A request then yields one RequestLimit per limit (request-limits.ts).
import type { Bucket } from '../core/ids.js';
import type { Rule } from '../policies/rule.js';
import type { LimitCall } from '../limiter/steps/compose.js';
import type { PenaltyConfig } from '../policies/penalty/model.js';
import type { CountRule, UsageCost } from '../usage/types.js';

export type KeySource =
  /** The API key's tenant (the default): bucket `rl:{tenant}:<limit id>`. */
  | { readonly kind: 'tenant' }
  /** The client IP (client-ip.ts): bucket `rl:{~ip.<address>}:<limit id>`. */
  | { readonly kind: 'ip' }
  /** A request header set by a proxy in front, hashed: `rl:{~h.<sha-256>}:<limit id>`. */
  | { readonly kind: 'header'; readonly header: string }
  /** The route alone, a ceiling over every client: `rl:{~route}:<limit id>`. */
  | { readonly kind: 'route' }
  /** Tenant and client IP: `rl:{tenant}:~ip.<address>.<limit id>` (the tenant's slot). */
  | { readonly kind: 'tenant+ip' }
  /** A claim of the request's verified JWT (auth: jwt), hashed as a header is: `rl:{~h.<sha-256>}:<limit id>`. */
  | { readonly kind: 'claim'; readonly claim: string }
  /** Tenant × a field of the request's JSON body (an LLM's `model`), hashed: `rl:{tenant}:~b.<sha-256>.<limit id>` (the tenant's slot). */
  | { readonly kind: 'body'; readonly field: readonly string[] };

export type KeySourceName = KeySource['kind'];

/**
 * Who the request is, once identified (http/identify.ts): the tenant (API
 * key or tenantClaim), the plan a token names (planClaim; absent: the
 * tenant's own assignment decides), and the verified JWT's claims.
 */
export interface RequestIdentity {
  readonly tenant: string | undefined;
  readonly plan?: string | undefined;
  readonly claims?: Readonly<Record<string, unknown>> | undefined;
}

export interface LimitConfig {
  /** Names the limit in headers, metrics and logs, and its bucket. */
  readonly id: string;
  readonly key: KeySource;
  /** Fixed rule; undefined = the rule store's tenant × route rule (tenant-keyed limits only). */
  readonly rule: Rule | undefined;
  /** A penalty box (policies/penalty/): a key refused too often is blocked; absent = none. */
  readonly penalty?: PenaltyConfig;
  /** Priced by the response: an estimate reserved, the usage settled (docs/usage-limits.md). */
  readonly usage?: UsageCost;
  /** Counts only some answers by status; the others are refunded. */
  readonly count?: CountRule;
}

export interface ClientIpConfig {
  /** CIDRs of the proxies whose forwarding header is believed; empty = the socket address always. */
  readonly trustedProxies: readonly string[];
  /** Which header the trusted proxies append to. */
  readonly header: 'x-forwarded-for' | 'forwarded';
  /** IPv6 clients share a bucket per prefix of this length. */
  readonly ipv6Prefix: number;
}

/** One limit as it applies to one request. */
export interface RequestLimit extends LimitCall {
  readonly limitId: string;
  /** The limit's bucket, `rl:{tag}:name` (its tag a tenant or a derived `~…` id). */
  readonly bucket: Bucket;
  /** Where the rule came from (docs/plans.md#which-rule-applied); absent where no lookup was made (the decision service's descriptors). */
  readonly from?: RuleOrigin;
  /** The limit's usage pricing: `cost` is then the estimate reserved, settled once the response ends. */
  readonly usage?: UsageCost;
  readonly count?: CountRule;
}

/** Which rule applied to a limit: a per-key override, the limit's inline rule, a plan's limit (and which plan), or a stored rule by its match. */
export type RuleOrigin =
  | { readonly match: 'override' | 'inline' | 'tenant-route' | 'tenant-any' | 'any-route' | 'default' }
  | { readonly match: 'plan'; readonly plan: string };

export const usesTenant = (key: KeySource): boolean => key.kind === 'tenant' || key.kind === 'tenant+ip' || key.kind === 'body';
export const usesIp = (key: KeySource): boolean => key.kind === 'ip' || key.kind === 'tenant+ip';

/** What a route's limits read of its route (config/types.ts RouteConfig has it). */
export interface LimitedRoute {
  readonly id: string;
  /** Units one request takes from each of the route's limits. */
  readonly cost: number;
  readonly limits: readonly LimitConfig[];
  /** The route's `kind: concurrency` limits; absent = none. */
  readonly concurrency?: readonly ConcurrencyLimitConfig[];
}

/** A `kind: concurrency` limit: at most `max` requests (or tunnels) of one key open at once, cluster-wide. */
export interface ConcurrencyLimitConfig {
  readonly id: string;
  readonly key: KeySource;
  readonly max: number;
  /** How long a lease lives unless renewed (its holder renews it every third of it). */
  readonly leaseTtlMs: number;
  readonly onStoreDown: 'fallback' | 'open' | 'closed';
}
