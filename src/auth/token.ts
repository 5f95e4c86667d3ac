// Finds the token in a request: `Authorization: Bearer`, a named header or a
// cookie. Its size is checked on the raw value, before anything is parsed, so
// a 64 KB header costs a length comparison. A header sent twice is malformed:
// node keeps only the first Authorization, and the upstream might read another.
import type { IncomingHttpHeaders } from 'node:http';
import { countHeader } from '../core/raw-headers.js';
import type { TokenSource } from './jwt-config.js';
import type { AuthFailure } from './failures.js';

const BEARER = /^Bearer +([A-Za-z0-9\-_.]+) *$/i;

/** The token, or why there is none to verify. */
export function tokenOf(source: TokenSource, headers: IncomingHttpHeaders, maxBytes: number, rawHeaders?: readonly string[]): { token: string } | AuthFailure {
  const name = source.kind === 'bearer' ? 'authorization' : source.kind === 'header' ? source.name : 'cookie';
  const value = headers[name];
  if (value === undefined || value === '') return 'missing';
  if (typeof value !== 'string') return 'malformed';
  if (source.kind !== 'cookie' && rawHeaders !== undefined && countHeader(rawHeaders, name) > 1) return 'malformed';
  if (source.kind === 'cookie') return cookieToken(value, source.name, maxBytes);
  // The prefix is at most a few bytes: a value far past the limit is refused before any matching.
  if (value.length > maxBytes + 16) return 'too_large';
  const match = BEARER.exec(value);
  const token = match ? match[1]! : source.kind === 'header' && !value.includes(' ') ? value : undefined;
  if (token === undefined) return 'malformed';
  return token.length > maxBytes ? 'too_large' : { token };
}

/** The named cookie of a Cookie header (node joins several with `; `); two of the same name are malformed. */
function cookieToken(header: string, name: string, maxBytes: number): { token: string } | AuthFailure {
  let found: string | undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq === -1 || pair.slice(0, eq).trim() !== name) continue;
    if (found !== undefined) return 'malformed';
    found = pair.slice(eq + 1).trim();
  }
  if (found === undefined || found === '') return 'missing';
  return found.length > maxBytes ? 'too_large' : { token: found };
}
