// Route matching: first declared route whose method and path match wins.
// Patterns: `/orders` (exact), `/orders/:id` (one segment per parameter),
// `/api/*` (the prefix itself and anything under it), `/*` (every path); a
// route with a `host` matches only requests for that host. Paths are matched
// normalized (request-path.ts), lower-cased on a `caseInsensitive` route; host
// names lower-cased, without their port and trailing dot.
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
    const normal = normalizeTarget(url);
    if (normal === undefined) return undefined;
    const [path] = splitTarget(normal);
    let lower: string | undefined;
    let name: string | undefined;
    for (const entry of this.entries) {
      if (entry.methods !== undefined && !entry.methods.has(method)) continue;
      if (entry.caseInsensitive && lower === undefined) lower = path.toLowerCase();
      if (!entry.matches(entry.caseInsensitive ? lower! : path)) continue;
      if (entry.host === undefined) return entry;
      name ??= hostName(host);
      if (entry.host(name)) return entry;
    }
    return undefined;
  }
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
