// What the gateway attaches to each route when a config is loaded: its
// upstream instances (balanced, sharing one pool per origin across routes),
// its path and header plan, its retry statuses and its limits.
import type { RouteConfig } from '../config/types.js';
import type { ClientIpResolver } from '../request-limits/client-ip.js';
import { RouteLimits } from '../request-limits/request-limits.js';
import type { RuleResolver } from '../rules/types.js';
import { Balancer } from './balancer.js';
import type { ForwardTarget, Upstreams } from './proxy.js';
import { UpstreamPlan } from './upstream-plan.js';

/** A route's upstream and its limits, attached once per route. */
export interface LimitedTarget extends ForwardTarget {
  limits: RouteLimits;
  /** The route's active health check, started by Upstreams.checkHealth. */
  health: RouteConfig['healthCheck'];
}

export function routeTarget(route: RouteConfig, upstreams: Upstreams, rules: RuleResolver, clientIp: ClientIpResolver, ipv6Prefix: number): LimitedTarget {
  return {
    balancer: new Balancer(route.id, route.upstreams, (origin) => upstreams.pool(origin)),
    plan: new UpstreamPlan(route, clientIp),
    timeoutMs: route.timeoutMs,
    retryOn: new Set(route.retryOn),
    limits: new RouteLimits(route, rules, clientIp, ipv6Prefix),
    health: route.healthCheck,
  };
}
