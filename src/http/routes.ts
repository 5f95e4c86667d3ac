// Route matching: first declared route whose method and path match wins.
// Patterns: `/orders` (exact), `/orders/:id` (one segment per parameter),
// `/api/*` (the prefix itself and anything under it), `/*` (every path); a
// route with a `host` matches only requests for that host. Paths are matched
// normalized (normalizeTarget, below), lower-cased on a `caseInsensitive` route; host
// names lower-cased, without their port and trailing dot. `explain` runs the
// same checks on every route and says which one each route fails.
//
// normalizeTarget: the path a route is matched on and the upstream is sent: the request's path
// normalized as RFC 3986 §6.2.2 says (percent-encoded unreserved characters
// decoded, the other escapes' hex upper-cased, `.` and `..` segments
// resolved), with empty segments collapsed as nginx's merge_slashes does. An
// upstream that decodes `%2e` or merges `//` itself would otherwise serve a
// path no route was matched on (and no limit applied to).
//
// screenRequest, below: what the gateway refuses before it routes a request, each with a 400 of its
// own: a Host that is no host name (it would reach X-Forwarded-Host raw and
// could dodge a host route), a path that cannot be normalized, and an upgrade
// that carries a body (the body would not follow the upgrade upstream, and an
// upstream that ignored the Upgrade would read it as the next request). An
// accepted request's url is rewritten to its normalized form, so the route is
// matched on, and the upstream sent, the same path.
import type { IncomingMessage } from 'node:http';
import type { RouteConfig } from '../config/types.js';
import { countHeader } from '../core/raw-headers.js';
import type { GatewayErrorName } from './errors.js';
import { hostName } from './hop-by-hop.js';

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

/** Characters RFC 3986 §2.3 calls unreserved: decoding them never changes what a path means. */
const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * The normalized path, or undefined when it cannot be served: a fragment
 * (`#` never belongs in a request target; refused as Envoy does), a malformed
 * escape (`%zz`), a `..` that climbs above the root, or no leading `/`.
 */
export function normalizePath(path: string): string | undefined {
  if (path.charCodeAt(0) !== 47) return undefined;
  // Nearly every request: nothing to decode, resolve or merge.
  if (!path.includes('%') && !path.includes('/.') && !path.includes('//') && !path.includes('#')) return path;
  if (path.includes('#')) return undefined;
  const decoded = decodeUnreserved(path);
  if (decoded === undefined) return undefined;
  return resolveSegments(decoded);
}

function decodeUnreserved(path: string): string | undefined {
  if (!path.includes('%')) return path;
  let out = '';
  for (let i = 0; i < path.length; i++) {
    const char = path[i]!;
    if (char !== '%') {
      out += char;
      continue;
    }
    const hex = path.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return undefined;
    const decoded = String.fromCharCode(Number.parseInt(hex, 16));
    out += UNRESERVED.test(decoded) ? decoded : `%${hex.toUpperCase()}`;
    i += 2;
  }
  return out;
}

/** `.` dropped, `..` takes the segment before it, empty segments merged; a trailing slash is kept. */
function resolveSegments(path: string): string | undefined {
  const segments = path.split('/');
  const out: string[] = [];
  let trailingSlash = false;
  for (let i = 1; i < segments.length; i++) {
    const segment = segments[i]!;
    const last = i === segments.length - 1;
    if (segment === '..') {
      if (out.length === 0) return undefined; // above the root: nginx answers 400 too
      out.pop();
      trailingSlash = last;
    } else if (segment === '.' || segment === '') {
      trailingSlash = last;
    } else {
      out.push(segment);
      trailingSlash = false;
    }
  }
  return `/${out.join('/')}${trailingSlash && out.length > 0 ? '/' : ''}`;
}

/** Splits a request target into its path and the rest (`?query`, kept as sent). */
export function splitTarget(url: string): [path: string, rest: string] {
  const query = url.indexOf('?');
  return query === -1 ? [url, ''] : [url.slice(0, query), url.slice(query)];
}

/** The request target with its path normalized and its query as sent; undefined as for normalizePath (a `#` in the query too). */
export function normalizeTarget(url: string): string | undefined {
  if (url.includes('#')) return undefined;
  const [path, rest] = splitTarget(url);
  const normal = normalizePath(path);
  return normal === undefined ? undefined : normal === path ? url : `${normal}${rest}`;
}

/** A host name (labels, an optional trailing dot), an IPv4 address or `[IPv6]`, with an optional port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9_-]+\.)*[A-Za-z0-9_-]+\.?)(?::[0-9]{1,5})?$/;

/** Why the request is refused, or undefined (its url then normalized). */
export function screenRequest(req: IncomingMessage): GatewayErrorName | undefined {
  if (!validHost(req)) return 'invalid_host';
  if ((req as { upgrade?: boolean }).upgrade === true && hasBody(req)) return 'upgrade_with_body';
  const url = req.url ?? '/';
  const normal = normalizeTarget(url);
  if (normal === undefined) return 'invalid_path';
  if (normal !== url) req.url = normal;
  return undefined;
}

function validHost(req: IncomingMessage): boolean {
  const { host } = req.headers;
  const authority = req.headers[':authority'];
  if (host !== undefined && (!HOST.test(host) || countHeader(req.rawHeaders, 'host') > 1)) return false;
  return authority === undefined || (typeof authority === 'string' && HOST.test(authority));
}

export { countHeader };

/** Whether the request says a body follows. */
const hasBody = (req: IncomingMessage) => req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && Number(req.headers['content-length']) !== 0);
