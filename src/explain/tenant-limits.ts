// The limits that count a tenant's own requests, across every route: what
// `GET /tenants/{id}/usage` reports on. The same steps as explain's (each
// route's RouteLimits.explain, the same rule lookup: override > plan > rule
// store > default), kept to the limits whose bucket is the tenant's (keyed by
// `tenant`, or `tenant+ip`, one bucket per client address in the tenant's
// slot). A limit met on several routes with the same bucket and rule is one
// entry naming those routes. Pure: no I/O.
import type { Rule } from '../policies/rule.js';
import { ClientIpResolver } from '../request-limits/client-ip.js';
import { RouteLimits } from '../request-limits/request-limits.js';
import type { ExplainContext } from './explain.js';
import { type BucketLocation, explainLimit, type RuleSource } from './limit-explain.js';

export interface TenantLimit {
  id: string;
  /** From `globalLimits:`. */
  global: boolean;
  keyedBy: 'tenant' | 'tenant+ip';
  /** The routes whose requests it counts. */
  routes: string[];
  rule?: Rule;
  source?: RuleSource;
  /** The tenant's bucket (a `tenant+ip` limit has one per client address: none here). */
  bucket?: BucketLocation;
}

/** No request to read an address or a header from: only the tenant's own buckets are formed. */
const NO_REQUEST = { headers: {}, socket: {} };

export function tenantLimits(context: ExplainContext, tenant: string): TenantLimit[] {
  const { config } = context;
  const clientIp = new ClientIpResolver(config.clientIp);
  const globalIds = new Set(config.globalLimits.map((limit) => limit.id));
  const overrides = context.rules.overrides?.();
  const byBucket = new Map<string, TenantLimit>();
  for (const route of config.routes) {
    // An anonymous route has no tenant: its limits never count one.
    if (route.anonymous) continue;
    const traces = new RouteLimits(route, context.rules, clientIp, config.clientIp.ipv6Prefix).explain(tenant, NO_REQUEST);
    for (const trace of traces) {
      if (trace.kind !== 'rate') continue;
      const keyedBy = trace.limit.key.kind;
      if (keyedBy !== 'tenant' && keyedBy !== 'tenant+ip') continue;
      const explained = explainLimit(trace, { global: globalIds.has(trace.limit.id), ruleStore: context.ruleStore, overrides });
      const entryKey = `${trace.limit.id} ${explained.bucket?.redisKey ?? keyedBy} ${JSON.stringify(explained.rule)}`;
      const known = byBucket.get(entryKey);
      if (known) {
        known.routes.push(route.id);
        continue;
      }
      byBucket.set(entryKey, {
        id: trace.limit.id,
        global: explained.global,
        keyedBy,
        routes: [route.id],
        ...(explained.rule ? { rule: explained.rule } : {}),
        ...(explained.source ? { source: explained.source } : {}),
        ...(keyedBy === 'tenant' && explained.bucket ? { bucket: explained.bucket } : {}),
      });
    }
  }
  return [...byBucket.values()];
}
