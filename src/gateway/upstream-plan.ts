// What a route changes on the way upstream and back: the path (stripPrefix or
// a rewrite), the request headers (hop-by-hop dropped, the forwarding headers
// rebuilt, the route's set/remove, the JWT claims its auth forwards) and the
// response headers (hop-by-hop dropped, the route's set/remove). Built once per route.
import type { IncomingMessage } from 'node:http';
import type { HeaderEdits, RouteConfig } from '../config/types.js';
import { claimHeaderValue } from '../core/claims.js';
import { forwardedRequestHeaders, forwardedResponseHeaders } from '../http/hop-by-hop.js';
import { normalizePath, splitTarget } from '../http/routes.js';
import type { ClientIpResolver } from '../request-limits/client-ip.js';

/** Who is asking, for the `{tenant}`, `{route}` and `{clientIp}` placeholders. */
export interface RequestContext {
  tenant: string | undefined;
  route: string;
  /** The verified JWT's claims, for the route's auth.forwardClaims. */
  claims?: Readonly<Record<string, unknown>> | undefined;
}

interface CompiledEdits {
  remove: Set<string>;
  set: [name: string, value: string, templated: boolean][];
}

function compileEdits(edits: HeaderEdits | undefined): CompiledEdits | undefined {
  if (edits === undefined) return undefined;
  const remove = new Set(edits.remove.map((name) => name.toLowerCase()));
  const set = Object.entries(edits.set).map(([name, value]): [string, string, boolean] => [name, value, /\{(?:tenant|route|clientIp)\}/.test(value)]);
  for (const [name] of set) remove.add(name.toLowerCase()); // set replaces
  return { remove, set };
}

export class UpstreamPlan {
  private readonly requestEdits: CompiledEdits | undefined;
  private readonly responseEdits: CompiledEdits | undefined;
  private readonly prefix: string | undefined;
  private readonly rewrite: { pattern: RegExp; replacement: string } | undefined;
  /** Every path sent upstream starts with it. */
  private readonly targetPrefix: string;
  /** auth.forwardClaims: [claim, lower-cased header]; the client's headers of those names never pass. */
  private readonly claimHeaders: readonly [claim: string, header: string][];
  private readonly claimHeaderNames: ReadonlySet<string>;

  constructor(
    route: RouteConfig,
    private readonly clientIp: ClientIpResolver,
  ) {
    this.requestEdits = compileEdits(route.requestHeaders);
    this.responseEdits = compileEdits(route.responseHeaders);
    this.prefix = route.stripPrefix ? route.path.slice(0, -2) : undefined;
    this.rewrite = route.rewrite ? { pattern: new RegExp(route.rewrite.pattern), replacement: route.rewrite.replacement } : undefined;
    this.targetPrefix = route.rewrite ? literalPrefix(route.rewrite.replacement) : '/';
    this.claimHeaders = Object.entries(route.auth?.forwardClaims ?? {});
    this.claimHeaderNames = new Set(this.claimHeaders.map(([, header]) => header));
  }

  /**
   * The path and query sent upstream: `url` (already normalized) with the
   * prefix stripped or the rewrite applied, normalized again (a rewrite can
   * join `//` or bring `..` back). Undefined when the result would leave the
   * route's target: the replacement's literal prefix (`/public/v2/` of
   * `/public/v2/$1`), or the root.
   */
  path(url: string): string | undefined {
    if (this.prefix === undefined && this.rewrite === undefined) return url;
    const [path, rest] = splitTarget(url);
    const changed = this.prefix !== undefined ? path.slice(this.prefix.length) : path.replace(this.rewrite!.pattern, this.rewrite!.replacement);
    const normal = normalizePath(changed.startsWith('/') ? changed : `/${changed}`);
    if (normal === undefined || !(normal.startsWith(this.targetPrefix) || `${normal}/` === this.targetPrefix)) return undefined;
    return `${normal}${rest}`;
  }

  requestHeaders(req: IncomingMessage, context: RequestContext): string[] {
    const out = forwardedRequestHeaders(req, this.clientIp);
    const edited = this.requestEdits ? applyEdits(out, this.requestEdits, () => this.fill(req, context)) : out;
    return this.claimHeaders.length === 0 ? edited : this.withClaims(edited, context.claims);
  }

  /** `flat` without any header of a forwarded claim's name (the client's spoof), then the claims the token carries. */
  private withClaims(flat: string[], claims: RequestContext['claims']): string[] {
    const out: string[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      if (!this.claimHeaderNames.has(flat[i]!.toLowerCase())) out.push(flat[i]!, flat[i + 1]!);
    }
    for (const [claim, header] of this.claimHeaders) {
      const value = claimHeaderValue(claims, claim);
      if (value !== undefined) out.push(header, value);
    }
    return out;
  }

  /** The response head for the client from the upstream's raw header list. */
  responseHeaders(rawHeaders: readonly (Buffer | string)[]): string[] {
    const out = forwardedResponseHeaders(rawHeaders);
    return this.responseEdits ? applyEdits(out, this.responseEdits, () => ({})) : out;
  }

  private fill(req: IncomingMessage, context: RequestContext): Record<string, string> {
    return { tenant: context.tenant ?? '', route: context.route, clientIp: this.clientIp.clientIp(req.socket.remoteAddress, req.headers)?.address ?? '' };
  }
}

/** The directory a replacement always writes: up to the last `/` before its first `$` group (`/public/v2/$1` → `/public/v2/`). */
function literalPrefix(replacement: string): string {
  const group = replacement.indexOf('$');
  const literal = group === -1 ? replacement : replacement.slice(0, group);
  return literal.slice(0, literal.lastIndexOf('/') + 1) || '/';
}

/** `flat` without the removed names, then the set ones (placeholders filled; a header whose value fills to '' is left out). */
function applyEdits(flat: string[], edits: CompiledEdits, values: () => Record<string, string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    if (!edits.remove.has(flat[i]!.toLowerCase())) out.push(flat[i]!, flat[i + 1]!);
  }
  let filled: Record<string, string> | undefined;
  for (const [name, value, templated] of edits.set) {
    if (!templated) {
      out.push(name, value);
      continue;
    }
    filled ??= values();
    const text = value.replace(/\{(tenant|route|clientIp)\}/g, (_all, key: string) => filled![key] ?? '');
    if (text !== '') out.push(name, text);
  }
  return out;
}
