// Each route as explain shows it: whether it takes the sample request, and if
// not, which of RouteTable's own checks it fails (routes.ts RouteMiss), in
// words that name the route's setting and the request's value.
import type { RouteConfig } from '../config/types.js';
import { hostName } from '../http/hop-by-hop.js';
import type { RouteMiss, RouteVerdict } from '../http/routes.js';

export interface RouteExplanation {
  id: string;
  matched: boolean;
  /** Why it does not take the request (absent on the one that does). */
  reason?: RouteMiss;
  why: string;
}

export function explainRoutes(verdicts: readonly RouteVerdict<unknown>[], method: string, host: string | undefined): RouteExplanation[] {
  return verdicts.map(({ route, miss, earlier }) => {
    if (miss === undefined) return { id: route.id, matched: true, why: `${describe(route)} matches` };
    return { id: route.id, matched: false, reason: miss, why: whyNot(route, miss, method, host, earlier) };
  });
}

function whyNot(route: RouteConfig, miss: RouteMiss, method: string, host: string | undefined, earlier: string | undefined): string {
  switch (miss) {
    case 'method':
      return `method ${method} is not one of ${route.methods!.join(', ')}`;
    case 'path':
      return `path does not match ${route.path}${route.caseInsensitive ? ' (matched ignoring case)' : ''}`;
    case 'path_case':
      return `path matches ${route.path} only ignoring case, and the route is case-sensitive (set caseInsensitive: true to match it)`;
    case 'host':
      return host === undefined ? `the route needs host ${route.host}, and the request has no Host` : `host ${hostName(host)} is not ${route.host}`;
    case 'earlier_route':
      return `it would match, but route ${earlier} is declared before it and takes the request (the first match wins)`;
  }
}

function describe(route: RouteConfig): string {
  const methods = route.methods ? route.methods.join('|') : 'any method';
  return `${methods} ${route.path}${route.host ? ` on ${route.host}` : ''}`;
}
