// A request's limits: for each limit of its route, the bucket it counts in
// (tag and name, always valid ids: bucketKey builds the Redis key from them),
// the rule and the cost. The gateway decides them; the multi-limit engine will
// decide a whole list together.
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { RouteConfig } from '../config/types.js';
import { derivedId } from '../core/ids.js';
import { capacityOf, type Rule } from '../core/rule.js';
import type { RuleResolver } from '../rules/types.js';
import type { ClientIpResolver } from './client-ip.js';
import { ipBucketId } from './ip-address.js';
import { overrideRule } from './override-lookup.js';
import type { LimitConfig, RequestLimit } from './types.js';

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

/** The bucket tag every route-keyed limit shares: one ceiling per limit id, whoever asks. */
export const ROUTE_TAG = derivedId('route', '');

export class RouteLimits {
  readonly route: RouteConfig;
  private readonly limits: readonly LimitConfig[];

  constructor(
    route: RouteConfig,
    private readonly rules: RuleResolver,
    private readonly clientIp: ClientIpResolver,
    private readonly ipv6Prefix: number,
  ) {
    this.route = route;
    this.limits = route.limits;
  }

  /** The request's limits; `tenant` is undefined on an anonymous route. */
  resolve(tenant: string | undefined, request: LimitRequest): RequestLimit[] | LimitProblem {
    const out: RequestLimit[] = [];
    for (const limit of this.limits) {
      const resolved = this.one(limit, tenant, request);
      if (typeof resolved === 'string') return resolved;
      out.push(resolved);
    }
    return out;
  }

  private one(limit: LimitConfig, tenant: string | undefined, request: LimitRequest): RequestLimit | LimitProblem {
    // Per-key override > inline rule > the rule store's tenant × route rule (docs/limits.md#overrides).
    const override = overrideRule(this.rules.overrides?.(), limit, tenant, request, this.clientIp);
    const rule = override ?? limit.rule ?? this.rules.resolve(tenant as string, this.route.id).rule;
    const cost = this.route.cost;
    // Config rules were checked at load; a rule from the store may have shrunk since.
    if (cost > 1 && (override !== undefined || limit.rule === undefined) && cost > capacityOf(rule)) return 'cost_exceeds_capacity';
    switch (limit.key.kind) {
      case 'tenant':
        return made(limit.id, tenant as string, limit.id, rule, cost);
      case 'route':
        return made(limit.id, ROUTE_TAG, limit.id, rule, cost);
      case 'header': {
        const value = request.headers[limit.key.header];
        if (typeof value !== 'string' || value === '') return 'missing_limit_header';
        return made(limit.id, headerBucketId(value), limit.id, rule, cost);
      }
      default: {
        const ip = this.clientIp.clientIp(request.socket.remoteAddress, request.headers);
        if (ip === undefined) return 'no_client_address';
        const ipId = ipBucketId(ip, this.ipv6Prefix);
        if (limit.key.kind === 'ip') return made(limit.id, ipId, limit.id, rule, cost);
        // tenant+ip: in the tenant's slot, so a tenant's limits can be decided in one call
        return made(limit.id, tenant as string, `${ipId}.${limit.id}`, rule, cost);
      }
    }
  }
}

const made = (limitId: string, tag: string, name: string, rule: Rule, cost: number): RequestLimit => ({ limitId, tag, name, rule, cost });

/** `~h.` and 128 bits of the value's SHA-256: the raw value never reaches a key or a log. */
export function headerBucketId(value: string): string {
  return derivedId('h.', createHash('sha256').update(value).digest('hex').slice(0, 32));
}
