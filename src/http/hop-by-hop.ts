// Headers that belong to one connection and must not cross the proxy
// (RFC 9110 §7.6.1), plus the ones the gateway rewrites itself.
import type { IncomingMessage } from 'node:http';
import type { ClientIpResolver } from '../request-limits/client-ip.js';
import { parseIp } from '../core/ip-address.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Headers that tell an upstream who the client is, where it came from or what
 * it asked for, that Sluice never sets: each one a client sends would be
 * believed by some framework (Express's trust proxy, Symfony, IIS's
 * X-Original-URL, method-override middleware), so none is passed on.
 */
const UNVOUCHED = [
  'x-real-ip',
  'x-client-ip',
  'true-client-ip',
  'x-cluster-client-ip',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-forwarded-server',
  'x-forwarded-ssl',
  'x-forwarded-scheme',
  'x-forwarded-uri',
  'x-forwarded-method',
  'x-original-url',
  'x-original-uri',
  'x-original-method',
  'x-original-host',
  'x-rewrite-url',
  'x-host',
  'x-http-method-override',
  'x-http-method',
  'x-method-override',
];

/** Request headers the gateway drops: hop-by-hop, the Host (undici sets the upstream's), Expect (node already answered 100-continue), the forwarding headers it rebuilds and the ones it does not vouch for. */
const REQUEST_DROP = new Set([...HOP_BY_HOP, 'host', 'expect', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host', 'forwarded', ...UNVOUCHED]);

/** The header names listed in a Connection header (they are hop-by-hop too). */
function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  // Nearly every client sends `keep-alive` (or `close`) alone: no split, no Set, per request.
  if (value === undefined || value === 'keep-alive' || value === 'close' || value === 'Keep-Alive') return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  const tokens = new Set<string>();
  for (const token of text.split(',')) {
    const name = token.trim().toLowerCase();
    if (name !== '' && name !== 'close' && name !== 'keep-alive') tokens.add(name);
  }
  return tokens.size > 0 ? tokens : undefined;
}

/**
 * The request's headers as a flat list for undici, with X-Forwarded-For/-Proto/-Host
 * and Forwarded (RFC 7239) set. What a trusted proxy in front wrote is kept and
 * this hop appended; what a client sent straight to us is dropped, so it can
 * neither forge its address nor the scheme or host the upstream sees.
 */
export function forwardedRequestHeaders(req: IncomingMessage, clientIp: ClientIpResolver): string[] {
  const raw = req.rawHeaders;
  const named = connectionTokens(req.headers.connection);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    // HTTP/2's pseudo-headers (`:method`, `:path`, `:authority`…) are the request line, not headers.
    // A name with `_` is dropped as nginx does: many servers read `X_Forwarded_For` as X-Forwarded-For.
    if (REQUEST_DROP.has(lower) || named?.has(lower) || lower.charCodeAt(0) === 58 || lower.includes('_')) continue;
    out.push(name, raw[i + 1]!);
  }
  pushForwarding(out, req, clientIp);
  return out;
}

/**
 * A trusted proxy's own forwarding headers are kept, of the family Sluice
 * reads (`clientIp.header`): X-Forwarded-For/-Proto/-Host, or Forwarded. The
 * other family that proxy never wrote (and a client could have), so it starts
 * again at this hop.
 */
function pushForwarding(out: string[], req: IncomingMessage, clientIp: ClientIpResolver): void {
  const peer = parseIp(req.socket.remoteAddress);
  const trusted = peer !== undefined && clientIp.isTrusted(peer);
  const readsForwarded = clientIp.header === 'forwarded';
  const kept = (name: 'x-forwarded-for' | 'x-forwarded-proto' | 'x-forwarded-host' | 'forwarded') => {
    const value = trusted && (name === 'forwarded') === readsForwarded ? req.headers[name] : undefined;
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  const client = peer?.address ?? '';
  const proto = 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http';
  const previousFor = kept('x-forwarded-for');
  out.push('x-forwarded-for', previousFor ? `${previousFor}, ${client}` : client);
  out.push('x-forwarded-proto', kept('x-forwarded-proto') ?? proto);
  const authority = requestHost(req);
  const host = kept('x-forwarded-host') ?? authority;
  if (host) out.push('x-forwarded-host', host);
  const hop = `for=${forwardedNode(client)};proto=${proto}${authority ? `;host=${quoted(authority)}` : ''}`;
  const previousForwarded = kept('forwarded');
  out.push('forwarded', previousForwarded ? `${previousForwarded}, ${hop}` : hop);
}

/** The host the client asked for: `Host` in HTTP/1.1, `:authority` in HTTP/2, which wins over a `host` header beside it (RFC 9113 §8.3.1). */
export function requestHost(req: IncomingMessage): string | undefined {
  const host = req.headers[':authority'] ?? req.headers.host;
  return typeof host === 'string' && host !== '' ? host : undefined;
}

/**
 * The Host header's name, lower-cased, without its port (`[::1]:8080` → `[::1]`)
 * and its trailing dot: `api.example.com.` is the same fully qualified name
 * (RFC 1034 §3.1), so it must meet the same host route.
 */
export function hostName(host: string | undefined): string {
  if (!host) return '';
  const lower = host.toLowerCase();
  if (lower.startsWith('[')) return lower.slice(0, lower.indexOf(']') + 1);
  const colon = lower.indexOf(':');
  const name = colon === -1 ? lower : lower.slice(0, colon);
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** RFC 7239 §6: an IPv6 node is quoted and bracketed. */
const forwardedNode = (address: string) => (address.includes(':') ? `"[${address}]"` : address || 'unknown');
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A host with a port (`a:8080`) is not a token (the colon says so before the pattern runs): quoted, with `"` and `\` escaped. */
function quoted(value: string): string {
  if (!value.includes(':') && TOKEN.test(value)) return value;
  return `"${value.includes('"') || value.includes('\\') ? value.replace(/["\\]/g, '\\$&') : value}"`;
}

/**
 * The upstream's response headers for `res.writeHead`, hop-by-hop removed: from
 * the flat name/value list undici (Buffers) and node (`rawHeaders`) give, names
 * lower-cased, repeated headers kept as they came.
 */
export function forwardedResponseHeaders(raw: readonly (Buffer | string)[]): string[] {
  const out: string[] = [];
  let connection: string | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = latin1(raw[i]!).toLowerCase();
    const value = latin1(raw[i + 1]!);
    if (name === 'connection') connection = connection === undefined ? value : `${connection},${value}`;
    if (!HOP_BY_HOP.has(name)) out.push(name, value);
  }
  const named = connectionTokens(connection);
  if (named === undefined) return out;
  const kept: string[] = [];
  for (let i = 0; i < out.length; i += 2) if (!named.has(out[i]!)) kept.push(out[i]!, out[i + 1]!);
  return kept;
}

/** A header's bytes as HTTP gives them (RFC 9110 §5.5: field values are octets, read as Latin-1). */
const latin1 = (text: Buffer | string) => (typeof text === 'string' ? text : text.toString('latin1'));
