// The adapters' options, checked once when the adapter is built: one rule, a
// list of limits, or a resolve function; how each limit finds its bucket's key
// (the API key header, the client's address, the route, a claim of the JWT the
// app verified, or the caller's function); and the gateway's clientIp settings
// for `key: 'ip'`.
import { SluiceError } from '../core/errors.js';
import { isValidId } from '../core/ids.js';
import { assertValidCost, parseRule, type Rule, zodToSluiceError } from '../policies/rule.js';
import type { HeaderOptions } from '../http/headers.js';
import type { Engine } from '../limiter/engine/engine.js';
import { ClientIpResolver } from '../request-limits/client-ip.js';
import { clientIpSchema } from '../request-limits/client-ip-schema.js';
import { countOf } from '../usage/check-usage.js';
import type { CountEntry } from '../usage/schema.js';
import type { CountRule } from '../usage/types.js';
import type { ListSet } from '../lists/list-set.js';
import { type AdapterListEntry, checkListsOption } from './lists.js';

/**
 * Where a limit's bucket key comes from: `header` (the API key header, hashed),
 * `ip` (the client's address: IPv4, or the IPv6 /64; see `clientIp`), `route`
 * (one bucket for every client), `{ claim }` (a claim of the verified JWT
 * payload that `claims` reads, hashed) or a function of the request (any
 * string; one that is not an id is hashed; undefined = this limit does not apply).
 */
export type KeyOf<Request> = 'header' | 'ip' | 'route' | { claim: string } | ((request: Request) => string | undefined);

/** The verified JWT payload the app's own auth put on the request: express-jwt's `req.auth`, @fastify/jwt's `request.user`. */
export type ClaimsOf<Request> = (request: Request) => Readonly<Record<string, unknown>> | undefined;

export interface AdapterLimit<Request> {
  /** Names the limit: its bucket `rl:{key}:<id>` and its entry in the RateLimit headers. */
  id: string;
  rule: Rule;
  /** Default `header`. */
  key?: KeyOf<Request>;
  /** Units one request takes (default 1); with `settle`, the units reserved before the app answers. */
  cost?: number;
  /**
   * Reserve, then settle (docs/library.md#priced-by-the-response): called once the response has been sent,
   * with its status; the units the request really used (e.g. the tokens an LLM call took). The difference
   * from `cost` is charged (a debt past empty) or given back. Undefined: the reservation stands.
   */
  settle?: (request: Request, status: number) => number | undefined;
  /** Count only some answers, e.g. `{ status: [401, 403] }` (failed logins) or `{ skipStatus: ['5xx'] }`: the others give their units back. */
  count?: CountEntry;
}

/** What `resolve` returns for a request: a bucket by `tenant` (any string; hashed unless an id) or by `key`. */
export interface LimitTarget {
  tenant?: string;
  /** Instead of `tenant`: the client's address, or one bucket for the route. */
  key?: 'ip' | 'route';
  route: string;
  rule: Rule;
  cost?: number;
}

export interface ClientIpOption {
  /** CIDRs of the proxies whose forwarding header is believed (default none: the socket's address). */
  trustedProxies?: string[];
  /** The header those proxies append to (default `x-forwarded-for`). */
  header?: 'x-forwarded-for' | 'forwarded';
  /** IPv6 clients share a bucket per prefix of this length (default 64). */
  ipv6Prefix?: number;
}

export interface AdapterOptions<Request> {
  engine: Engine;
  /** One rule for every request, keyed by `key`; its limit id is `route`. */
  rule?: Rule;
  /** The limit id used with `rule` (default `default`). */
  route?: string;
  /** The key used with `rule` (default `header`). */
  key?: KeyOf<Request>;
  /** Several limits, decided together (every one admits, or none is charged). */
  limits?: AdapterLimit<Request>[];
  /** Header naming the caller for `key: 'header'` (default `x-api-key`); a request without it gets 401. */
  header?: string;
  /** Per request: which buckets and rules, or undefined to let the request through unlimited. */
  resolve?: (request: Request) => LimitTarget | readonly LimitTarget[] | undefined | Promise<LimitTarget | readonly LimitTarget[] | undefined>;
  /** How `key: 'ip'` finds the client's address, as the gateway's `clientIp:`. */
  clientIp?: ClientIpOption;
  /** Where `key: { claim }` finds the verified JWT payload (default: `request.auth`, else `request.user`); the adapter never verifies a token itself. */
  claims?: ClaimsOf<Request>;
  /** IETF RateLimit headers and problem+json bodies, as in the gateway config. */
  headers?: Partial<HeaderOptions>;
  /** Allow and deny list entries, as the config file's `lists:` (docs/library.md#allow-and-deny-lists): applied before the limits. */
  lists?: AdapterListEntry[];
}

/** A limit as the adapter keeps it, checked. */
export interface CheckedLimit<Request> {
  readonly id: string;
  readonly rule: Rule;
  readonly key: KeyOf<Request>;
  readonly cost: number;
  readonly settle: ((request: Request, status: number) => number | undefined) | undefined;
  readonly count: CountRule | undefined;
}

export interface CheckedOptions<Request> {
  readonly engine: Engine;
  /** Undefined with `resolve`. */
  readonly limits: readonly CheckedLimit<Request>[] | undefined;
  readonly resolve: AdapterOptions<Request>['resolve'];
  readonly header: string;
  readonly clientIp: ClientIpResolver;
  readonly ipv6Prefix: number;
  readonly headerOptions: HeaderOptions;
  readonly claims: ClaimsOf<Request>;
  /** The `lists` option compiled; undefined without entries. */
  readonly lists: ListSet | undefined;
}

/** express-jwt sets `req.auth`, @fastify/jwt `request.user`: objects only (a string `user` is no payload). */
function defaultClaims(request: unknown): Readonly<Record<string, unknown>> | undefined {
  const holder = request as { auth?: unknown; user?: unknown } | null;
  const payload = holder?.auth ?? holder?.user;
  return payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>) : undefined;
}

const fail = (message: string, field: string) => new SluiceError('ERR_CONFIG_INVALID', message, field);

export function checkOptions<Request>(options: AdapterOptions<Request>): CheckedOptions<Request> {
  if (options === null || typeof options !== 'object' || !options.engine) throw fail('is required', 'engine');
  const given = [options.rule, options.limits, options.resolve].filter((value) => value !== undefined).length;
  if (given !== 1) throw fail('give exactly one of rule, limits or resolve', 'rule');
  if (options.resolve !== undefined && typeof options.resolve !== 'function') throw fail('must be a function', 'resolve');
  if (options.claims !== undefined && typeof options.claims !== 'function') throw fail('must be a function', 'claims');
  const limits = options.rule !== undefined ? [{ id: options.route ?? 'default', rule: options.rule, ...(options.key ? { key: options.key } : {}) }] : options.limits;
  const parsedIp = clientIpSchema.safeParse(options.clientIp ?? {});
  if (!parsedIp.success) throw zodToSluiceError(parsedIp.error, 'clientIp', 'ERR_CONFIG_INVALID');
  const checkedLimits = limits === undefined ? undefined : checkLimits(limits, options.rule !== undefined);
  return {
    engine: options.engine,
    limits: checkedLimits,
    resolve: options.resolve,
    header: (options.header ?? 'x-api-key').toLowerCase(),
    clientIp: new ClientIpResolver(parsedIp.data),
    ipv6Prefix: parsedIp.data.ipv6Prefix,
    headerOptions: { ietf: options.headers?.ietf ?? false, problemJson: options.headers?.problemJson ?? false },
    claims: options.claims ?? defaultClaims,
    lists: checkListsOption(options.lists, checkedLimits?.map((limit) => limit.id)),
  };
}

function checkLimits<Request>(limits: readonly AdapterLimit<Request>[], single: boolean): CheckedLimit<Request>[] {
  if (!Array.isArray(limits) || limits.length === 0) throw fail('must be a non-empty list', 'limits');
  const seen = new Set<string>();
  return limits.map((limit, i) => {
    const at = single ? '' : `limits.${i}.`;
    const idField = single ? 'route' : `${at}id`;
    if (!isValidId(limit.id) || limit.id.startsWith('~')) throw fail('must be an id (letters, digits, . _ ~ @ + -, not starting with ~)', idField);
    if (seen.has(limit.id)) throw fail(`${limit.id} is given twice`, idField);
    seen.add(limit.id);
    const rule = parseRule(limit.rule, single ? 'rule' : `${at}rule`);
    const key = limit.key ?? 'header';
    const claimKey = typeof key === 'object' && key !== null && typeof key.claim === 'string' && key.claim !== '';
    if (typeof key !== 'function' && key !== 'header' && key !== 'ip' && key !== 'route' && !claimKey) throw fail("must be 'header', 'ip', 'route' or a function, or { claim: name }", `${at}key`);
    const cost = limit.cost ?? 1;
    assertValidCost(rule, cost);
    if (limit.settle !== undefined && typeof limit.settle !== 'function') throw fail('must be a function (request, status) => units', `${at}settle`);
    return { id: limit.id, rule, key, cost, settle: limit.settle, count: checkCount(limit.count, `${at}count`) };
  });
}

/**
 * A limit's `count`, as the gateway's `count:` (usage/schema.ts), its error
 * naming the field. Checked by hand, not by that zod schema: the adapters
 * load no zod until a rule is parsed (docs/library.md#weight).
 */
function checkCount(count: CountEntry | undefined, field: string): CountRule | undefined {
  if (count === undefined) return undefined;
  const only = typeof count === 'object' && count !== null && 'status' in count;
  const listed: unknown = only ? (count as { status: unknown }).status : (count as { skipStatus?: unknown } | null)?.skipStatus;
  const key = only ? 'status' : 'skipStatus';
  if (typeof count !== 'object' || count === null || Object.keys(count).length !== 1 || !Array.isArray(listed)) throw fail('must be { status: [...] } or { skipStatus: [...] }', field);
  if (listed.length === 0) throw fail('must list at least one status', `${field}.${key}`);
  listed.forEach((item, i) => {
    const status = typeof item === 'number' && Number.isInteger(item) && item >= 100 && item <= 599;
    if (!status && !(typeof item === 'string' && /^[1-5]xx$/.test(item))) throw fail('must be a status (e.g. 401) or a class (e.g. 5xx)', `${field}.${key}.${i}`);
  });
  return countOf(count);
}
