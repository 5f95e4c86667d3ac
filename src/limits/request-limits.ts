// A request's limits: for each limit of its route, the bucket it counts in
// (tag and name, always valid ids: bucketKey builds the Redis key from them),
// the rule and the cost. The gateway decides them; the multi-limit engine will
// decide a whole list together.
import type { IncomingHttpHeaders } from 'node:http';
import { headerBucketId, ROUTE_TAG, slotKey } from '../core/ids.js';
import { capacityOf, type Rule } from '../core/rule.js';
import type { ResolvedRule, RuleMatch, RuleResolver } from '../rules/types.js';
import type { ClientIpResolver } from './client-ip.js';
import { ipBucketId, type ParsedIp } from '../core/ip-address.js';
import { type KeyIdentity, overrideRule } from './override-lookup.js';
import type { SlotLimitCall } from '../limiter/concurrency/types.js';
import type { ConcurrencyLimitConfig, LimitConfig, LimitedRoute, RequestLimit, RuleOrigin } from './types.js';

/** Why a request has no limits to decide: the gateway answers with this error. */
export type LimitProblem =
  /** A `key: { header }` limit and the request lacks the header (400). */
  | 'missing_limit_header'
  /** The rule store's rule or override holds fewer units than the route's cost (503: the operator must fix the rule). */
  | 'cost_exceeds_capacity'
  /** The connection closed before we could read its address. */
  | 'no_client_address';

export interface LimitRequest {
  readonly headers: IncomingHttpHeaders;
  readonly socket: { readonly remoteAddress?: string | undefined };
}

export { ROUTE_TAG } from '../core/ids.js';

export class RouteLimits<R extends LimitedRoute = LimitedRoute> {
  readonly route: R;
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
    const ipOf = this.ipOf(request);
    for (const limit of this.limits) {
      const resolved = this.one(limit, { tenant, plan }, request, ipOf);
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

  private one(limit: LimitConfig, who: Who, request: LimitRequest, ipOf: () => ParsedIp | undefined): RequestLimit | LimitProblem {
    const { tenant } = who;
    const bucket = this.bucketOf(limit, tenant, request, ipOf);
    if (typeof bucket === 'string') return bucket;
    // Per-key override > the plan's limit of this id > inline rule > the rule store's (docs/limits.md#overrides, docs/plans.md#precedence).
    // The bucket is the same whichever rule applies: a plan change keeps its state (docs/plans.md#bucket-state).
    const override = overrideRule(this.rules.overrides?.(), limit, bucket);
    const resolved = override === undefined ? this.ruleOf(limit, who) : undefined;
    const rule = override ?? resolved?.rule ?? (limit.rule as Rule);
    const cost = this.route.cost;
    // Config rules were checked at load; a rule from the store may have shrunk since.
    if (cost > 1 && (override !== undefined || limit.rule === undefined || resolved?.match === 'plan') && cost > capacityOf(rule)) return 'cost_exceeds_capacity';
    const from: RuleOrigin = override !== undefined ? { match: 'override' } : resolved === undefined ? { match: 'inline' } : originOf(resolved);
    return { limitId: limit.id, tag: bucket.tag, name: bucket.name, rule, cost, from };
  }

  /** The store's rule for a limit without an inline rule; a plan's limit of this id over an inline one; undefined: the inline rule. */
  private ruleOf(limit: LimitConfig, { tenant, plan }: Who): ResolvedRule | undefined {
    if (limit.rule === undefined) return this.rules.resolve(tenant as string, this.route.id, { plan, limitId: limit.id });
    return this.rules.planLimit?.(tenant, limit.id, plan);
  }

  /** Where the limit's bucket is (`rl:{tag}:name`), and the key it was made from, for the override lookup. */
  private bucketOf(limit: Pick<LimitConfig, 'id' | 'key'>, tenant: string | undefined, request: LimitRequest, ipOf: () => ParsedIp | undefined): Bucket | LimitProblem {
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

const originOf = (resolved: ResolvedRule): RuleOrigin => (resolved.plan === undefined ? { match: resolved.match as Exclude<RuleMatch, 'plan'> } : { match: 'plan', plan: resolved.plan });

/** A limit's bucket for one request, with the key identity it came from. */
interface Bucket extends KeyIdentity {
  readonly tag: string;
  readonly name: string;
}

export { headerBucketId } from '../core/ids.js';
