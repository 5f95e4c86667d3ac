// `sluice explain`: what the gateway would do with one sample request, and
// why. It walks the gateway's own steps with the gateway's own functions (the
// screen, RouteTable, tenantOfRequest, RouteLimits with the ClientIpResolver),
// so an explanation cannot drift from what a request meets: which route takes
// it and why each other does not, who the client is, which limits apply or are
// skipped and why, each limit's key, rule and its source, and its bucket's
// Redis key. Pure: no I/O (bucket-state.ts adds the buckets' current state).
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { JwtAuthConfig } from '../auth/jwt-config.js';
import type { JwtVerifier } from '../auth/jwt-verifier.js';
import { VerifierPool } from '../auth/verifier-pool.js';
import type { SluiceConfig } from '../config/types.js';
import { GATEWAY_ERRORS, type GatewayErrorName } from '../core/error-codes.js';
import { parseIp } from '../core/ip-address.js';
import { acceptableMethod } from '../gateway/listener.js';
import { requestHost } from '../http/hop-by-hop.js';
import { identityOfToken, tenantOfRequest } from '../http/identify.js';
import { RouteTable, screenRequest } from '../http/routes.js';
import { ClientIpResolver } from '../request-limits/client-ip.js';
import { RouteLimits } from '../request-limits/request-limits.js';
import { type RequestIdentity, usesTenant } from '../request-limits/types.js';
import { hashApiKeyHex } from '../rules/keys.js';
import type { RuleResolver, TenantResolver } from '../rules/types.js';
import { type AuthExplanation, authExplanation, authRefusal, type TokenOutcome } from './auth-explain.js';
import { explainLimit, type LimitExplanation, skippedLimit, type SkipReason } from './limit-explain.js';
import { explainRoutes, type RouteExplanation } from './route-explain.js';
import type { SampleRequest } from './sample.js';

export type { LimitExplanation, SkipReason } from './limit-explain.js';
export type { RouteExplanation } from './route-explain.js';
export type { AuthExplanation } from './auth-explain.js';

/** What the gateway reads: the loaded config and the resolvers it was given (the rule store's cache, or the config file's rules). */
export interface ExplainContext {
  readonly config: SluiceConfig;
  readonly rules: RuleResolver;
  readonly tenants: TenantResolver;
  /** Whether `rules` is the rule store's cache (else the config file's `rules:`). */
  readonly ruleStore: boolean;
  /** The gateway's own verifiers (gateway.ts `verifiers`), so a sample's token meets the same keys and cache; else one made from the config. */
  readonly verifiers?: { of(auth: JwtAuthConfig | undefined): JwtVerifier | undefined };
}

export interface Explanation {
  request: {
    method: string;
    /** The target as routes are matched on it (normalized); absent when it cannot be. */
    path: string;
    host?: string;
    /** The socket peer given, whether it is a trusted proxy, and the client address the gateway keys by. */
    peer?: string;
    trustedProxy: boolean;
    clientIp?: string;
  };
  /** What the gateway answers before it reaches the upstream, or 200 once every limit is decided (a 429 depends on the buckets). */
  outcome: { status: number; error?: GatewayErrorName; summary: string; decided: boolean };
  /** The route that takes the request. */
  route?: string;
  routes: RouteExplanation[];
  identity: {
    keyHeader: string;
    anonymous: boolean;
    tenant?: string;
    /** The first 12 hex digits of the API key's SHA-256: the key itself is never shown. */
    keySha256?: string;
    /** The plan the API key names (its own assignment), when it has one; else the tenant's plan applies (docs/plans.md). */
    plan?: string;
    /** Why the request has no tenant. */
    problem?: 'missing_api_key' | 'unknown_api_key' | 'duplicate_api_key';
    /** An unknown key given a tenant of its own (`tenants.unknownKeys: default-rule`). */
    unknownKey?: boolean;
  };
  /** The route requires a JWT (`auth: { kind: jwt }`): where it is read, whether it verifies, what it yields. */
  auth?: AuthExplanation;
  limits: LimitExplanation[];
}

/**
 * explainRequest with the sample's token verified as the gateway would (the
 * same verifier; a jwksUrl is fetched, bounded by its timeout) when the route
 * that takes it has `auth: jwt`. The token is only verified, never kept.
 */
export async function explainSample(context: ExplainContext, sample: SampleRequest): Promise<Explanation> {
  const first = explainRequest(context, sample);
  const route = context.config.routes.find((entry) => entry.id === first.route);
  if (route?.auth === undefined) return first;
  const verifier = context.verifiers?.of(route.auth) ?? ownVerifiers(context).of(route.auth)!;
  const req = fakeRequest(sample);
  const token = await identityOfToken(verifier, { route, headers: req.headers, rawHeaders: req.rawHeaders, keyHeader: context.config.tenants.header, tenants: context.tenants });
  return explainRequest(context, sample, token);
}

/**
 * The gateway's steps (gateway.ts handle → decide) on the sample, each one's
 * answer kept. On a route with `auth: jwt`, `token` is the verifier's answer
 * (explainSample gets it); without one the explanation stops at the token.
 */
export function explainRequest(context: ExplainContext, sample: SampleRequest, token?: TokenOutcome): Explanation {
  const { config } = context;
  const req = fakeRequest(sample);
  const clientIp = new ClientIpResolver(config.clientIp);
  const out = baseOf(context, sample, req.headers, clientIp);
  if (!acceptableMethod(sample.method)) return refused(out, 'bad_request', `the method ${JSON.stringify(sample.method)} is not upper-case letters, '_' or '-'`);
  const screened = screenRequest(req);
  if (screened !== undefined) return refused(out, screened, 'refused before routing: no route is matched');
  out.request.path = req.url;
  const table = new RouteTable(config.routes, (route) => new RouteLimits(route, context.rules, clientIp, config.clientIp.ipv6Prefix));
  const host = requestHost(req);
  const match = table.match(sample.method, req.url, host);
  out.routes = explainRoutes(table.explain(sample.method, req.url, host) ?? [], sample.method, host);
  out.route = match?.route.id;
  const globalIds = new Set(config.globalLimits.map((limit) => limit.id));
  const skipAll = (reason: SkipReason) => [...match!.route.limits, ...(match!.route.concurrency ?? [])].map((limit) => skippedLimit(limit, globalIds.has(limit.id), reason));
  const auth = match?.route.auth;
  // The gateway verifies the token before anything else (gateway.ts authenticate): an API key is read only without a tenantClaim.
  if (auth !== undefined) out.auth = authExplanation(auth, token);
  if (auth !== undefined && (token === undefined || 'refused' in token)) {
    const refusal = authRefusal(token);
    out.limits = skipAll(refusal.skip);
    return refused(out, refusal.error, refusal.summary);
  }
  const byToken = auth?.tenantClaim !== undefined;
  const found = byToken ? { tenant: (token as RequestIdentity).tenant } : tenantOfRequest(match?.route, req.headers, config.tenants.header, context.tenants, req.rawHeaders);
  identify(out, match?.route.anonymous === true, found, byToken ? undefined : req.headers[config.tenants.header]);
  if ('problem' in found) {
    // The gateway asks for the key before it answers 404: a missing key is a 401 even on a path no route takes.
    if (match) out.limits = skipAll(found.problem);
    return refused(out, found.problem, match ? 'refused before any limit is decided' : 'the API key is checked before the route (no route takes the request either)');
  }
  if (!match) return refused(out, 'no_route', 'no route takes the request');
  const length = req.headers['content-length'];
  if (length !== undefined && Number(length) > config.limits.maxBodyBytes) {
    out.limits = skipAll('body_too_large');
    return refused(out, 'body_too_large', 'refused before any limit is decided');
  }
  // The limits read the token's claims (key: {claim}) as gateway.ts decide gives them; the rules, the plan
  // the token names (planClaim) over the API key's own (identify.ts identityOfToken).
  const identity = token !== undefined && !('refused' in token) && !('problem' in token) ? token : undefined;
  const plan = identity?.plan ?? ('plan' in found ? found.plan : undefined);
  const traces = match.target.explain(found.tenant, identity?.claims === undefined ? req : { headers: req.headers, socket: req.socket, identity }, plan);
  out.limits = traces.map((trace) => explainLimit(trace, { global: globalIds.has(trace.limit.id), ruleStore: context.ruleStore, overrides: context.rules.overrides?.() }));
  // A tenant-keyed global limit is not appended to an anonymous route (check-limits.ts withGlobalLimits).
  const unapplied = config.globalLimits.filter((limit) => !match.route.limits.some((own) => own.id === limit.id));
  for (const limit of unapplied) {
    if (match.route.anonymous && usesTenant(limit.key)) out.limits.push(skippedLimit(limit, true, 'anonymous_route'));
    // A claim-keyed global limit skips a route without auth: it has no claims (config/check-limits.ts).
    else if (limit.key.kind === 'claim' && match.route.auth === undefined) out.limits.push(skippedLimit(limit, true, 'route_without_auth'));
  }
  return settle(out);
}

/** The gateway's answer once the limits are formed: the first limit that cannot be (resolve's order), else decided. */
function settle(out: Explanation): Explanation {
  const problem = out.limits.find((limit) => limit.reason !== undefined && limit.reason !== 'anonymous_route' && limit.reason !== 'route_without_auth' && limit.reason !== 'request_refused');
  if (problem) {
    for (const limit of out.limits) if (limit !== problem && limit.status !== 'skipped') Object.assign(limit, { status: 'skipped', reason: 'request_refused', why: `not decided: limit ${problem.id} refuses the request first` });
    return refused(out, problem.reason as GatewayErrorName | 'no_client_address', `limit ${problem.id}: ${problem.why}`);
  }
  const counted = out.limits.filter((limit) => limit.status !== 'skipped').length;
  const summary = counted === 0 ? 'forwarded: no limit applies' : `decided by ${counted} limit${counted === 1 ? '' : 's'}: forwarded while every enforced limit admits, else 429`;
  out.outcome = { status: 200, summary, decided: counted > 0 };
  return out;
}

/** One pool per context when the gateway's is not given (the CLI's --config): a jwksUrl is fetched once per run. */
const pools = new WeakMap<ExplainContext, VerifierPool>();
function ownVerifiers(context: ExplainContext): VerifierPool {
  const pool = pools.get(context) ?? new VerifierPool();
  pools.set(context, pool);
  return pool;
}

function refused(out: Explanation, error: GatewayErrorName | 'no_client_address', summary: string): Explanation {
  // A connection already gone is not answered: the gateway cuts it (gateway.ts answerUnlimitable).
  if (error === 'no_client_address') out.outcome = { status: 0, summary: `${summary} (the connection is closed, not answered)`, decided: false };
  else out.outcome = { status: GATEWAY_ERRORS[error].status, error, summary: `${summary}: ${GATEWAY_ERRORS[error].meaning}`, decided: false };
  return out;
}

function identify(out: Explanation, anonymous: boolean, found: ReturnType<typeof tenantOfRequest>, key: string | string[] | undefined): void {
  const identity = out.identity;
  identity.anonymous = anonymous;
  if (!anonymous && typeof key === 'string' && key !== '') identity.keySha256 = hashApiKeyHex(key).slice(0, 12);
  if ('problem' in found) identity.problem = found.problem;
  else if (found.tenant !== undefined) {
    identity.tenant = found.tenant;
    if (found.plan !== undefined) identity.plan = found.plan;
    if (found.tenant.startsWith('~')) identity.unknownKey = true;
  }
}

function baseOf(context: ExplainContext, sample: SampleRequest, headers: IncomingHttpHeaders, clientIp: ClientIpResolver): Explanation {
  const peer = parseIp(sample.ip);
  const client = clientIp.clientIp(sample.ip, headers);
  return {
    request: {
      method: sample.method,
      path: sample.path,
      ...(sample.host !== undefined ? { host: sample.host } : {}),
      ...(peer ? { peer: peer.address } : {}),
      trustedProxy: peer !== undefined && clientIp.isTrusted(peer),
      ...(client ? { clientIp: client.address } : {}),
    },
    outcome: { status: 200, summary: '', decided: false },
    routes: [],
    identity: { keyHeader: context.config.tenants.header, anonymous: false },
    limits: [],
  };
}

/** The sample as node would give it to the gateway: lower-cased header names, repeats joined with `, `, the raw list kept. */
function fakeRequest(sample: SampleRequest): IncomingMessage & { url: string } {
  const rawHeaders: string[] = [];
  const headers: Record<string, string> = {};
  const pairs = sample.host === undefined ? sample.headers : [['Host', sample.host] as const, ...sample.headers.filter(([name]) => name.toLowerCase() !== 'host')];
  for (const [name, value] of pairs) {
    rawHeaders.push(name, value);
    const lower = name.toLowerCase();
    headers[lower] = headers[lower] === undefined ? value : `${headers[lower]}, ${value}`;
  }
  return { method: sample.method, url: sample.path, headers, rawHeaders, socket: { remoteAddress: sample.ip } } as unknown as IncomingMessage & { url: string };
}
