// Route matching: first declared route whose method and path match wins.
// Patterns: `/orders` (exact), `/orders/:id` (one segment per parameter),
// `/api/*` (the prefix itself and anything under it), `/*` (every path); a
// route with a `host` matches only requests for that host. Paths are matched
// normalized (request-path.ts), lower-cased on a `caseInsensitive` route; host
// names lower-cased, without their port and trailing dot. `explain` runs the
// same checks on every route and says which one each route fails.
import type { RouteConfig } from '../config/types.js';
import { hostName } from './hop-by-hop.js';
import { normalizeTarget, splitTarget } from './request-path.js';

type PathMatcher = (path: string) => boolean;

export interface CompiledRoute<T> {
  route: RouteConfig;
  /** Whatever the gateway attaches per route (its upstream pool). */
  target: T;
}

interface Entry<T> extends CompiledRoute<T> {
  methods: ReadonlySet<string> | undefined;
  matches: PathMatcher;
  caseInsensitive: boolean;
  host: ((host: string) => boolean) | undefined;
}

export class RouteTable<T> {
  private readonly entries: Entry<T>[];

  constructor(routes: readonly RouteConfig[], target: (route: RouteConfig) => T) {
    this.entries = routes.map((route) => ({
      route,
      target: target(route),
      methods: route.methods ? new Set(route.methods) : undefined,
      matches: compilePath(route.caseInsensitive ? route.path.toLowerCase() : route.path),
      caseInsensitive: route.caseInsensitive,
      host: route.host === undefined ? undefined : compileHost(route.host),
    }));
  }

  /** What each route was given, in order. */
  targets(): T[] {
    return this.entries.map((entry) => entry.target);
  }

  /**
   * `url` is the request target as node gives it (path and query); `host` the
   * Host header (a route with a host needs it). A path that cannot be
   * normalized (a fragment, `..` above the root) matches no route.
   */
  match(method: string, url: string, host?: string): CompiledRoute<T> | undefined {
    const target = matchTarget(method, url, host);
    if (target === undefined) return undefined;
    for (const entry of this.entries) if (missOf(entry, target) === undefined) return entry;
    return undefined;
  }

  /**
   * Every route in order, with why it does not take the request (undefined:
   * the one that does); `sluice explain` shows it. The checks are match's own.
   * Undefined when the path cannot be normalized (no route could match).
   */
  explain(method: string, url: string, host?: string): RouteVerdict<T>[] | undefined {
    const target = matchTarget(method, url, host);
    if (target === undefined) return undefined;
    let winner: string | undefined;
    return this.entries.map((entry) => {
      let miss: RouteMiss | undefined = missOf(entry, target);
      // Case-sensitive and the path differs only in case: the likeliest mistake, said as such.
      if (miss === 'path' && !entry.caseInsensitive && compilePath(entry.route.path.toLowerCase())(target.lower)) miss = 'path_case';
      if (miss === undefined && winner !== undefined) return { ...entry, miss: 'earlier_route', earlier: winner };
      if (miss === undefined) winner = entry.route.id;
      return { ...entry, miss };
    });
  }
}

/** Why a route does not take a request, checked in this order. */
export type RouteMiss =
  /** The route lists methods, and not this one. */
  | 'method'
  /** The path does not match the route's pattern. */
  | 'path'
  /** It would match ignoring case, and the route is case-sensitive (`caseInsensitive: false`). */
  | 'path_case'
  /** The route names a host, and the request's Host is another (or absent). */
  | 'host'
  /** The route matches, but an earlier declared route matched first. */
  | 'earlier_route';

export interface RouteVerdict<T> extends CompiledRoute<T> {
  /** Undefined on the route that takes the request. */
  miss: RouteMiss | undefined;
  /** With `earlier_route`: the route that took it. */
  earlier?: string;
}

/** The request as every route is checked against it; the lower-cased path and the host name worked out once, when a route asks. */
class MatchTarget {
  private lowerPath: string | undefined;
  private name: string | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    private readonly hostHeader: string | undefined,
  ) {}

  get lower(): string {
    this.lowerPath ??= this.path.toLowerCase();
    return this.lowerPath;
  }

  get host(): string {
    this.name ??= hostName(this.hostHeader);
    return this.name;
  }
}

function matchTarget(method: string, url: string, host: string | undefined): MatchTarget | undefined {
  const normal = normalizeTarget(url);
  if (normal === undefined) return undefined;
  return new MatchTarget(method, splitTarget(normal)[0], host);
}

/** The first check `entry` fails, or undefined when it takes the request: methods, then path, then host. */
function missOf(entry: Entry<unknown>, target: MatchTarget): 'method' | 'path' | 'host' | undefined {
  if (entry.methods !== undefined && !entry.methods.has(target.method)) return 'method';
  if (!entry.matches(entry.caseInsensitive ? target.lower : target.path)) return 'path';
  if (entry.host !== undefined && !entry.host(target.host)) return 'host';
  return undefined;
}

/** `api.example.com` exactly, or `*.example.com`: any name under example.com (not example.com itself). */
function compileHost(pattern: string): (host: string) => boolean {
  if (!pattern.startsWith('*.')) return (host) => host === pattern;
  const suffix = pattern.slice(1);
  return (host) => host.length > suffix.length && host.endsWith(suffix);
}

export function compilePath(pattern: string): PathMatcher {
  if (pattern.endsWith('/*')) {
    const prefix = pattern.slice(0, -2);
    const withSlash = `${prefix}/`;
    return (path) => path === prefix || path.startsWith(withSlash) || (prefix === '' && path === '/');
  }
  if (!pattern.includes('/:')) {
    // A trailing slash is the same resource: `/orders/` matches `/orders`.
    const alternate = pattern.length > 1 && !pattern.endsWith('/') ? `${pattern}/` : pattern;
    return (path) => path === pattern || path === alternate;
  }
  const source = pattern
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : escapeRegExp(segment)))
    .join('/');
  const regexp = new RegExp(`^${source}/?$`);
  return (path) => regexp.test(path);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
