// A request's limits: for each limit of its route, the bucket it counts in
// (tag and name, always valid ids: bucketKey builds the Redis key from them),
// the rule and the cost. The gateway decides them; the multi-limit engine will
// decide a whole list together.
//
// overrideRule, below: the per-key override of one limit for one request, if any: in-memory map
// reads, no I/O. Precedence (docs/limits.md#overrides): the client's exact IP,
// then the longest CIDR holding it, then the tenant, then a header's value;
// the caller falls back to the limit's inline rule and then the rule store's.
// The IP matched is the real address, not its IPv6 bucket prefix: an override
// for one /128 admits that host more, while its bucket stays the /64's.
import type { IncomingHttpHeaders } from 'node:http';
import { claimText } from '../core/claims.js';
import { type Bucket, headerBucketId, ROUTE_TAG, slotKey } from '../core/ids.js';
import { ipBucketId, ipv6Hex, ipv6Key, type ParsedIp } from '../core/ip-address.js';
import { capacityOf, type Rule } from '../policies/rule.js';
import type { SlotLimitCall } from '../limiter/concurrency/types.js';
import { ipv4Network, ipv4Number } from '../rules/override-selector.js';
import type { LimitOverrides, OverrideSet, PrefixTable } from '../rules/override-set.js';
import type { ResolvedRule, RuleMatch, RuleResolver } from '../rules/types.js';
import { bodyBucketName } from '../usage/body-key.js';
import { estimateOf } from '../usage/estimate.js';
import type { ClientIpResolver } from './client-ip.js';
import type { ConcurrencyLimitConfig, LimitConfig, LimitedRoute, RequestIdentity, RequestLimit, RuleOrigin } from './types.js';

/** Why a request has no limits to decide: the gateway answers with this error. */
export type LimitProblem =
  /** A `key: { header }` limit and the request lacks the header (400). */
  | 'missing_limit_header'
  /** The rule store's rule or override holds fewer units than the route's cost (503: the operator must fix the rule). */
  | 'cost_exceeds_capacity'
  /** The connection closed before we could read its address. */
  | 'no_client_address'
  /** A `key: { claim }` limit and the verified token lacks the claim (401). */
  | 'missing_limit_claim'
  /** A `key: { body }` limit and the request's JSON body lacks the field (400). */
  | 'missing_limit_field';

export interface LimitRequest {
  readonly headers: IncomingHttpHeaders;
  readonly socket: { readonly remoteAddress?: string | undefined };
  /** Who the request is (http/identify.ts): claim-keyed limits read its claims. */
  readonly identity?: RequestIdentity | undefined;
  /** The request's JSON body, parsed, when a limit reads it (usage/request-json.ts): body keys and estimates. */
  readonly json?: unknown;
}

export { ROUTE_TAG } from '../core/ids.js';

export class RouteLimits<R extends LimitedRoute = LimitedRoute> {
  readonly route: R;
  /** Whether a limit reads the request's JSON body (a body key, an estimate from the body): the gateway reads it before deciding. */
  readonly readsJson: boolean;
  private readonly limits: readonly LimitConfig[];
  private readonly concurrency: readonly ConcurrencyLimitConfig[];

  constructor(
    route: R,
    private readonly rules: RuleResolver,
    private readonly clientIp: ClientIpResolver,
    private readonly ipv6Prefix: number,
  ) {
    this.route = route;
    this.limits = route.limits;
    this.concurrency = route.concurrency ?? [];
    this.readsJson = this.limits.some((limit) => limit.key.kind === 'body' || (limit.usage !== undefined && 'fromBody' in limit.usage.estimate));
  }

  /** Whether the route has `kind: concurrency` limits. */
  get hasConcurrency(): boolean {
    return this.concurrency.length > 0;
  }

  /** The request's concurrency limits, each with its key's lease set (`rl:{tag}:name:cc`). */
  slots(tenant: string | undefined, request: LimitRequest): SlotLimitCall[] | LimitProblem {
    const ipOf = this.ipOf(request);
    const out: SlotLimitCall[] = [];
    for (const limit of this.concurrency) {
      const bucket = this.bucketOf(limit, tenant, request, ipOf);
      if (typeof bucket === 'string') return bucket;
      out.push({ limitId: limit.id, key: slotKey(bucket.tag, bucket.name), max: limit.max, ttlMs: limit.leaseTtlMs, onStoreDown: limit.onStoreDown });
    }
    return out;
  }

  /** The request's limits; `tenant` is undefined on an anonymous route; `plan` is the one the request names (docs/plans.md). */
  resolve(tenant: string | undefined, request: LimitRequest, plan?: string): RequestLimit[] | LimitProblem {
    const out: RequestLimit[] = [];
    const who = whoOf(tenant, request, plan);
    const ipOf = this.ipOf(request);
    for (const limit of this.limits) {
      const resolved = this.one(limit, who, request, ipOf);
      if (typeof resolved === 'string') return resolved;
      out.push(resolved);
    }
    return out;
  }

  /** The client's address, worked out once per request whatever number of limits key by it. */
  private ipOf(request: LimitRequest): () => ParsedIp | undefined {
    let ip: ParsedIp | undefined | null = null;
    return () => {
      if (ip === null) ip = this.clientIp.clientIp(request.socket.remoteAddress, request.headers);
      return ip;
    };
  }

  /**
   * Each limit of the route (rate limits, then concurrency ones) as `sluice
   * explain` shows it: its bucket or why it has none, its rule and where that
   * came from. The same steps as resolve and slots, one limit at a time.
   */
  explain(tenant: string | undefined, request: LimitRequest, plan?: string): LimitTrace[] {
    const who = whoOf(tenant, request, plan);
    const ipOf = this.ipOf(request);
    const rates = this.limits.map((limit): LimitTrace => {
      const bucket = this.bucketOf(limit, tenant, request, ipOf);
      if (typeof bucket === 'string') return { limit, kind: 'rate', problem: bucket };
      const { plan, ...choice } = this.ruleFor(limit, who, bucket);
      return { limit, kind: 'rate', bucket, ...choice, ...(plan === undefined ? {} : { plan }), ...(this.costExceeds(choice) ? { problem: 'cost_exceeds_capacity' as const } : {}) };
    });
    const slots = this.concurrency.map((limit): LimitTrace => {
      const bucket = this.bucketOf(limit, tenant, request, ipOf);
      return typeof bucket === 'string' ? { limit, kind: 'concurrency', problem: bucket } : { limit, kind: 'concurrency', bucket };
    });
    return [...rates, ...slots];
  }

  private one(limit: LimitConfig, who: Who, request: LimitRequest, ipOf: () => ParsedIp | undefined): RequestLimit | LimitProblem {
    const bucket = this.bucketOf(limit, who.tenant, request, ipOf);
    if (typeof bucket === 'string') return bucket;
    // The bucket is the same whichever rule applies: a plan change keeps its state (docs/plans.md#bucket-state).
    const choice = this.ruleFor(limit, who, bucket);
    if (limit.usage === undefined && this.costExceeds(choice)) return 'cost_exceeds_capacity';
    // One object literal of one shape for every limit (absent options undefined): the engine's
    // steps, the headers and the counters read these objects on every request, and a shape per
    // combination of options (as spreads made) turns each of those reads megamorphic.
    const usage = limit.usage;
    return {
      limitId: limit.id,
      bucket,
      rule: choice.rule,
      cost: usage === undefined ? this.route.cost : estimateOf(usage, request.json, choice.rule),
      from: originOf(choice),
      penalty: limit.penalty,
      usage,
      count: limit.count,
    };
  }

  /** Per-key override > the plan's limit of this id > inline rule > the rule store's (docs/limits.md#overrides, docs/plans.md#precedence). */
  private ruleFor(limit: LimitConfig, who: Who, bucket: KeyedBucket): RuleChoice {
    const override = overrideRule(this.rules.overrides?.(), limit, bucket);
    if (override !== undefined) return { rule: override, from: 'override', plan: undefined };
    const resolved = this.ruleOf(limit, who);
    if (resolved === undefined) return { rule: limit.rule as Rule, from: 'limit', plan: undefined };
    return { rule: resolved.rule, from: resolved.match, plan: resolved.plan };
  }

  /** The store's rule for a limit without an inline rule; a plan's limit of this id over an inline one; undefined: the inline rule. */
  private ruleOf(limit: LimitConfig, { tenant, plan }: Who): ResolvedRule | undefined {
    if (limit.rule === undefined) return this.rules.resolve(tenant as string, this.route.id, { plan, limitId: limit.id });
    return this.rules.planLimit?.(tenant, limit.id, plan);
  }

  /** Config rules were checked at load; a rule from the store, a plan or an override may have shrunk since. */
  private costExceeds(choice: Pick<RuleChoice, 'rule' | 'from'>): boolean {
    const cost = this.route.cost;
    return cost > 1 && choice.from !== 'limit' && cost > capacityOf(choice.rule);
  }

  /** Where the limit's bucket is (`rl:{tag}:name`), and the key it was made from, for the override lookup. */
  private bucketOf(limit: Pick<LimitConfig, 'id' | 'key'>, tenant: string | undefined, request: LimitRequest, ipOf: () => ParsedIp | undefined): KeyedBucket | LimitProblem {
    switch (limit.key.kind) {
      case 'tenant':
        return { tenant, tag: tenant as string, name: limit.id };
      case 'route':
        return { tenant, tag: ROUTE_TAG, name: limit.id };
      case 'header': {
        const value = request.headers[limit.key.header];
        if (typeof value !== 'string' || value === '') return 'missing_limit_header';
        const headerId = headerBucketId(value);
        return { tenant, headerId, tag: headerId, name: limit.id };
      }
      case 'body': {
        const name = bodyBucketName(request.json, limit.key.field, limit.id);
        return name === undefined ? 'missing_limit_field' : { tenant, tag: tenant as string, name };
      }
      case 'claim': {
        // A claim's value is the issuer's (an email, a URL): hashed as a header is, never a key name.
        const value = claimText(request.identity?.claims, limit.key.claim);
        return value === undefined ? 'missing_limit_claim' : { tenant, tag: headerBucketId(value), name: limit.id };
      }
      default: {
        const ip = ipOf();
        if (ip === undefined) return 'no_client_address';
        const ipId = ipBucketId(ip, this.ipv6Prefix);
        if (limit.key.kind === 'ip') return { tenant, ip, tag: ipId, name: limit.id };
        // tenant+ip: in the tenant's slot, so a tenant's limits can be decided in one call
        return { tenant, ip, tag: tenant as string, name: `${ipId}.${limit.id}` };
      }
    }
  }
}

/** Who the request is, for rule resolution. */
interface Who {
  readonly tenant: string | undefined;
  readonly plan: string | undefined;
}

/** The plan the request names: the caller's (the Envoy face's descriptor entry), else its identity's (a JWT's planClaim, an API key's own plan). */
const whoOf = (tenant: string | undefined, request: LimitRequest, plan: string | undefined): Who => ({ tenant, plan: plan ?? request.identity?.plan });

/** The origins without a plan, one frozen object each: a request's limits share them instead of allocating one per limit. */
const ORIGINS: Readonly<Record<Exclude<RuleFrom, 'plan'>, RuleOrigin>> = {
  override: Object.freeze({ match: 'override' }),
  limit: Object.freeze({ match: 'inline' }),
  'tenant-route': Object.freeze({ match: 'tenant-route' }),
  'tenant-any': Object.freeze({ match: 'tenant-any' }),
  'any-route': Object.freeze({ match: 'any-route' }),
  default: Object.freeze({ match: 'default' }),
};

function originOf(choice: RuleChoice): RuleOrigin {
  return choice.from === 'plan' ? { match: 'plan', plan: choice.plan as string } : ORIGINS[choice.from];
}

/**
 * A limit's bucket for one request, with the key identity it came from (for
 * the override lookup). The request's limit carries it as its bucket as is:
 * the engine reads only its ids.
 */
export interface KeyedBucket extends Bucket, KeyIdentity {}

/** Where a limit's rule came from: a per-key override, the limit's own `rule:`, or the resolver's match (rule-store or config rules, or the default rule). */
export type RuleFrom = 'override' | 'limit' | RuleMatch;

interface RuleChoice {
  readonly rule: Rule;
  readonly from: RuleFrom;
  /** The plan whose limit this is (from `plan`); undefined otherwise. */
  readonly plan: string | undefined;
}

/** One limit of a request as explain shows it; `problem` is what the gateway would answer instead of deciding. */
export interface LimitTrace {
  readonly limit: LimitConfig | ConcurrencyLimitConfig;
  readonly kind: 'rate' | 'concurrency';
  readonly bucket?: KeyedBucket;
  readonly rule?: Rule;
  readonly from?: RuleFrom;
  readonly plan?: string;
  readonly problem?: LimitProblem;
}

export { headerBucketId } from '../core/ids.js';

/** What identifies the request's key for this limit, already worked out for its bucket. */
export interface KeyIdentity {
  readonly tenant: string | undefined;
  /** The client's address (ip and tenant+ip limits). */
  readonly ip?: ParsedIp;
  /** The header value's bucket id (header limits). */
  readonly headerId?: string;
}

export function overrideRule(set: OverrideSet | undefined, limit: LimitConfig, key: KeyIdentity): Rule | undefined {
  const entry = set?.byLimit.get(limit.id);
  if (entry === undefined) return undefined;
  if (key.ip !== undefined && (entry.ipv4.lengths.length > 0 || entry.ipv6.lengths.length > 0)) {
    const byIp = ipOverride(entry, key.ip);
    if (byIp) return byIp;
  }
  const kind = limit.key.kind;
  if ((kind === 'tenant' || kind === 'tenant+ip') && key.tenant !== undefined) {
    const byTenant = entry.tenants.get(key.tenant);
    if (byTenant) return byTenant;
  }
  return key.headerId === undefined ? undefined : entry.headers.get(key.headerId);
}

/** The override of the longest prefix holding `ip` (an exact address is its /32 or /128). */
function ipOverride(entry: LimitOverrides, ip: ParsedIp): Rule | undefined {
  if (ip.family === 'ipv4') {
    const address = ipv4Number(ip.address);
    return longest(entry.ipv4, (prefix) => ipv4Network(address, prefix));
  }
  const hex = ipv6Hex(ip.address);
  return longest(entry.ipv6, (prefix) => ipv6Key(hex, prefix));
}

function longest(table: PrefixTable, networkOf: (prefix: number) => number | string): Rule | undefined {
  for (const prefix of table.lengths) {
    const rule = table.byLength.get(prefix)?.get(networkOf(prefix));
    if (rule) return rule;
  }
  return undefined;
}
