// Headers that belong to one connection and must not cross the proxy
// (RFC 9110 §7.6.1), plus the ones the gateway rewrites itself.
import type { IncomingMessage } from 'node:http';

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

/** Request headers the gateway drops: hop-by-hop, the Host (undici sets the upstream's), Expect (node already answered 100-continue) and the X-Forwarded-* it rebuilds. */
const REQUEST_DROP = new Set([...HOP_BY_HOP, 'host', 'expect', 'x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']);

/** The header names listed in a Connection header (they are hop-by-hop too). */
function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  const tokens = new Set<string>();
  for (const token of text.split(',')) {
    const name = token.trim().toLowerCase();
    if (name !== '' && name !== 'close' && name !== 'keep-alive') tokens.add(name);
  }
  return tokens.size > 0 ? tokens : undefined;
}

/** The request's headers as a flat list for undici, with X-Forwarded-For/-Proto/-Host set. */
export function forwardedRequestHeaders(req: IncomingMessage): string[] {
  const raw = req.rawHeaders;
  const named = connectionTokens(req.headers.connection);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (REQUEST_DROP.has(lower) || named?.has(lower)) continue;
    out.push(name, raw[i + 1]!);
  }
  const previous = req.headers['x-forwarded-for'];
  const client = req.socket.remoteAddress ?? '';
  out.push('x-forwarded-for', previous ? `${previous}, ${client}` : client);
  out.push('x-forwarded-proto', 'encrypted' in req.socket && req.socket.encrypted ? 'https' : 'http');
  if (req.headers.host) out.push('x-forwarded-host', req.headers.host);
  return out;
}

/** The upstream's response headers as a flat list for `res.writeHead`, hop-by-hop removed. */
export function forwardedResponseHeaders(headers: Record<string, string | string[] | undefined>): string[] {
  const named = connectionTokens(headers.connection);
  const out: string[] = [];
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || named?.has(name)) continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (typeof value === 'string') out.push(name, value);
    else for (const item of value) out.push(name, item);
  }
  return out;
}
