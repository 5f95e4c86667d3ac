// Which buckets one request counts in: for each limit, its bucket's tag (a
// hashed API key, the client's address, the route, or the caller's key, hashed
// when it is not an id) and name (the limit id). The same key helpers as the
// gateway's limits (core/ids.ts, core/ip-address.ts, request-limits/client-ip.ts).
import type { IncomingHttpHeaders } from 'node:http';
import { assertValidId, hashedId, keyId, ROUTE_TAG } from '../core/ids.js';
import { claimText } from '../core/claims.js';
import { SluiceError } from '../core/errors.js';
import type { LimitCall } from '../limiter/engine/engine.js';
import type { CountRule } from '../usage/types.js';
import { ipBucketId } from '../core/ip-address.js';
import type { CheckedLimit, CheckedOptions, KeyOf, LimitTarget } from './options.js';

/** The node request under the framework's: headers and the socket's peer. */
export interface RawRequest {
  readonly headers: IncomingHttpHeaders;
  readonly socket: { readonly remoteAddress?: string | undefined };
}

/** One limit of one request: its engine call and the id the headers name it by. */
export interface RequestCall<Request = unknown> extends LimitCall {
  readonly limitId: string;
  /** `resolve`'s tenant, as given: what a list's tenant entry matches. */
  readonly tenant?: string;
  /** Reserve, then settle (settle.ts): the units used, read once the response has gone. */
  readonly settle?: ((request: Request, status: number) => number | undefined) | undefined;
  /** Which answers count; the others give their reservation back. */
  readonly count?: CountRule | undefined;
}

export type Targets<Request = unknown> =
  | { readonly kind: 'calls'; readonly calls: RequestCall<Request>[] }
  /** Nothing applies: the request goes through unlimited. */
  | { readonly kind: 'skip' }
  /** A `key: 'header'` limit and the request lacks the header (401). */
  | { readonly kind: 'missing_api_key' }
  /** A `key: 'ip'` limit and the socket has no address left (the client is gone). */
  | { readonly kind: 'no_client_address' }
  /** A `key: { claim }` limit and the request has no verified payload, or it lacks the claim (401). */
  | { readonly kind: 'missing_limit_claim' };

const SKIP = { kind: 'skip' } as const;

export async function targetsOf<Request>(options: CheckedOptions<Request>, request: Request, raw: RawRequest): Promise<Targets<Request>> {
  if (options.limits === undefined) return resolved(options, request, raw);
  const calls: RequestCall<Request>[] = [];
  for (const limit of options.limits) {
    const tag = tagOf(options, limit.key, request, raw);
    if (typeof tag === 'object') return tag;
    if (tag !== undefined) calls.push(call(limit, tag));
  }
  return calls.length === 0 ? SKIP : { kind: 'calls', calls };
}

const call = <Request>(limit: CheckedLimit<Request>, tag: string): RequestCall<Request> => ({ limitId: limit.id, bucket: { tag, name: limit.id }, rule: limit.rule, cost: limit.cost, settle: limit.settle, count: limit.count });

/** The bucket tag for `key`; undefined when the caller's function says the limit does not apply. */
function tagOf<Request>(options: CheckedOptions<Request>, key: KeyOf<Request>, request: Request, raw: RawRequest): string | undefined | Targets {
  switch (key) {
    case 'header': {
      const value = raw.headers[options.header];
      // An API key is a secret: it is hashed, never a Redis key name.
      return typeof value === 'string' && value !== '' ? hashedId(value) : { kind: 'missing_api_key' };
    }
    case 'ip': {
      const ip = options.clientIp.clientIp(raw.socket.remoteAddress, raw.headers);
      return ip === undefined ? { kind: 'no_client_address' } : ipBucketId(ip, options.ipv6Prefix);
    }
    case 'route':
      return ROUTE_TAG;
    default: {
      if (typeof key === 'object') {
        // The issuer's value (an email, a URL): hashed as the gateway hashes it, never a key name.
        const value = claimText(options.claims(request), key.claim);
        return value === undefined ? { kind: 'missing_limit_claim' } : hashedId(value);
      }
      const value = key(request);
      return value === undefined ? undefined : keyId(value, 'key');
    }
  }
}

/** `resolve`'s answer as engine calls: one target or several, each checked (a bad one throws, naming its field). */
async function resolved<Request>(options: CheckedOptions<Request>, request: Request, raw: RawRequest): Promise<Targets<Request>> {
  const answer = await options.resolve!(request);
  if (answer === undefined) return SKIP;
  const targets: readonly LimitTarget[] = Array.isArray(answer) ? answer : [answer as LimitTarget];
  if (targets.length === 0) return SKIP;
  const calls: RequestCall<Request>[] = [];
  for (const target of targets) {
    assertValidId(target.route, 'route');
    // `~` starts the names Sluice derives (per-address buckets): a route may not take one.
    if (target.route.startsWith('~')) throw new SluiceError('ERR_ID_INVALID', 'must not start with ~', 'route');
    if (target.key !== undefined && target.key !== 'ip' && target.key !== 'route') throw new SluiceError('ERR_CONFIG_INVALID', "must be 'ip' or 'route'", 'key');
    const tag = target.key === undefined ? keyId(target.tenant, 'tenant') : tagOf(options, target.key, request, raw);
    if (typeof tag === 'object') return tag;
    calls.push({ limitId: target.route, bucket: { tag: tag!, name: target.route }, rule: target.rule, cost: target.cost ?? 1, ...(target.key === undefined ? { tenant: target.tenant } : {}) });
  }
  return { kind: 'calls', calls };
}
