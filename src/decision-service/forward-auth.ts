// Forward-auth: `/decide` on the decision listener. The proxy in front (nginx
// auth_request, Caddy forward_auth, Traefik forwardAuth, APISIX) asks before it
// forwards; the original method, URI and host come only from the headers that
// proxy kind sets and overwrites (decisionService.forwardAuthProxy): a header
// the proxy passes through untouched is the client's, and believing it would
// let the client pick the route it is limited by. The API key comes from the
// forwarded headers, the client IP from X-Forwarded-For only when the caller
// is a trusted proxy. A route with `auth: jwt` has the token of the forwarded
// Authorization (or its header or cookie) verified as the gateway does: a
// refused one is the 401 the proxy passes on, and a 200 carries the claims of
// forwardClaims for the proxy to copy upstream. The gateway's routes, keys and
// limits apply, decided through Engine.decideAll; before them the allow and
// deny lists: a denied request is the 403 every proxy passes on as a refusal
// (nginx's auth_request treats only 401 and 403 so), an allowed one a 200
// with no limit decided.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { VerifierPool } from '../auth/verifier-pool.js';
import type { ForwardAuthProxy } from '../config/decision-service.js';
import type { RouteConfig, SluiceConfig } from '../config/types.js';
import { claimHeaderValue } from '../core/claims.js';
import { sendAuthFailure, sendError } from '../http/errors.js';
import { type HeaderOptions, limitViews, pushLimitsHeaders, rejectionOf, retryAfterSeconds } from '../http/headers.js';
import { identityOfToken, listVerdict, type RequestIdentity, tenantOfRequest } from '../http/identify.js';
import { RouteTable } from '../http/routes.js';
import type { Engine, LimitsDecision } from '../limiter/engine/engine.js';
import { CombinedLists, type ListChecker, ListSet } from '../lists/list-set.js';
import { ClientIpResolver } from '../request-limits/client-ip.js';
import { countListed } from '../metrics/lists.js';
import { type LimitRequest, RouteLimits } from '../request-limits/request-limits.js';
import type { RequestLimit } from '../request-limits/types.js';
import type { RuleResolver, TenantResolver } from '../rules/types.js';
import { chargeReport } from '../usage/report.js';

export interface ForwardAuthOptions {
  config: SluiceConfig;
  engine: Engine;
  rules: RuleResolver;
  tenants: TenantResolver;
  logger: Logger;
  storedLists?: (() => ListSet) | undefined;
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/**
 * Where each proxy kind puts the original request. nginx's recipe sets
 * X-Original-Method/-URI and Host with proxy_set_header (a client's
 * X-Forwarded-* pass through it untouched); Caddy, Traefik and APISIX set
 * X-Forwarded-Method/-Uri/-Host themselves, over the client's.
 */
const ORIGINAL_REQUEST_HEADERS: Readonly<Record<ForwardAuthProxy, { method: string; uri: string; host: string }>> = {
  nginx: { method: 'x-original-method', uri: 'x-original-uri', host: 'host' },
  caddy: { method: 'x-forwarded-method', uri: 'x-forwarded-uri', host: 'x-forwarded-host' },
  traefik: { method: 'x-forwarded-method', uri: 'x-forwarded-uri', host: 'x-forwarded-host' },
  apisix: { method: 'x-forwarded-method', uri: 'x-forwarded-uri', host: 'x-forwarded-host' },
};

export class ForwardAuth {
  private readonly routes: RouteTable<RouteLimits<RouteConfig>>;
  private readonly keyHeader: string;
  private readonly headerOptions: HeaderOptions;
  private readonly refusedStatus: number;
  private readonly allowUnrouted: boolean;
  private readonly original: { method: string; uri: string; host: string };
  private readonly verifiers = new VerifierPool();
  private readonly clientIp: ClientIpResolver;
  private readonly lists: ListChecker;

  constructor(private readonly options: ForwardAuthOptions) {
    const { config } = options;
    const clientIp = new ClientIpResolver(config.clientIp);
    this.clientIp = clientIp;
    const configLists = new ListSet(config.lists);
    this.lists = options.storedLists ? new CombinedLists([() => configLists, options.storedLists]) : configLists;
    this.routes = new RouteTable(config.routes, (route) => new RouteLimits(route, options.rules, clientIp, config.clientIp.ipv6Prefix));
    this.keyHeader = config.tenants.header;
    this.headerOptions = config.headers;
    this.refusedStatus = config.decisionService.refusedStatus;
    this.allowUnrouted = config.decisionService.noRoute === 'allow';
    this.original = ORIGINAL_REQUEST_HEADERS[config.decisionService.forwardAuthProxy];
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    this.identified(req, res, () => res.writeHead(200, ['Content-Length', '0']).end(), (target, identity) => this.decide(req, res, target, identity));
  }

  /**
   * POST /usage: what an admitted request used, reported by the proxy once its
   * answer has ended, identified as /decide identifies it. Charged to the
   * route's limits priced by usage (`cost.from`), less the estimate /decide
   * reserved for them, without refusing; the other limits are not touched.
   */
  report(req: IncomingMessage, res: ServerResponse, units: number): void {
    const done = () => res.writeHead(204).end();
    this.identified(req, res, done, (target, identity) => {
      const request: LimitRequest = identity.claims === undefined ? req : { headers: req.headers, socket: req.socket, identity };
      const listed = listVerdict(this.lists, this.clientIp, req, target.route.id, identity);
      const resolved = listed.action === undefined ? target.resolve(identity.tenant, request, identity.plan) : [];
      if (typeof resolved === 'string') {
        if (resolved === 'no_client_address') res.destroy();
        else sendError(res, resolved);
        return;
      }
      // An allowlisted request (or limit) was decided nothing by /decide: nothing to settle.
      const priced = resolved.filter((limit) => limit.usage !== undefined && !listed.exemptLimits.has(limit.limitId));
      Promise.all(priced.map((limit) => chargeReport(this.options.engine, limit, units, limit.cost, 'forward_auth'))).then(
        done,
        (error: unknown) => this.failed(res, target.route.id, error),
      );
    });
  }

  /** Finds the forwarded request's route and who it is (its API key or token), then `then`; answers the errors itself (no route and `noRoute: allow`: `unrouted`). */
  private identified(req: IncomingMessage, res: ServerResponse, unrouted: () => void, then: (target: RouteLimits<RouteConfig>, identity: RequestIdentity) => void): void {
    const method = (header(req, this.original.method) ?? 'GET').toUpperCase();
    const uri = header(req, this.original.uri);
    if (uri === undefined || !uri.startsWith('/')) {
      sendError(res, 'bad_request');
      return;
    }
    const match = this.routes.match(method, uri, header(req, this.original.host));
    const verifier = this.verifiers.of(match?.route.auth);
    if (match !== undefined && verifier !== undefined) {
      const request = { route: match.route, headers: req.headers, rawHeaders: req.rawHeaders, keyHeader: this.keyHeader, tenants: this.options.tenants };
      identityOfToken(verifier, request).then(
        (found) => {
          if ('refused' in found) sendAuthFailure(res, found.refused);
          else if ('problem' in found) sendError(res, found.problem);
          else then(match.target, found);
        },
        (error: unknown) => this.failed(res, match.route.id, error),
      );
      return;
    }
    const found = tenantOfRequest(match?.route, req.headers, this.keyHeader, this.options.tenants);
    if ('problem' in found) {
      sendError(res, found.problem);
      return;
    }
    if (match === undefined) {
      if (this.allowUnrouted) unrouted();
      else sendError(res, 'no_route');
      return;
    }
    then(match.target, found);
  }

  private decide(req: IncomingMessage, res: ServerResponse, target: RouteLimits<RouteConfig>, identity: RequestIdentity): void {
    const request: LimitRequest = identity.claims === undefined ? req : { headers: req.headers, socket: req.socket, identity };
    const listed = listVerdict(this.lists, this.clientIp, req, target.route.id, identity);
    const admitted = () => res.writeHead(200, ['Content-Length', '0', ...claimHeaders(target.route.auth?.forwardClaims, identity.claims)]).end();
    if (listed.action !== undefined) {
      countListed(listed.action === 'deny' ? 'denied' : 'allowlisted');
      if (listed.action === 'deny') sendError(res, 'denied');
      else admitted();
      return;
    }
    const resolved = target.resolve(identity.tenant, request, identity.plan);
    const limits = typeof resolved === 'string' || listed.exemptLimits.size === 0 ? resolved : resolved.filter((limit) => !listed.exemptLimits.has(limit.limitId));
    if (typeof limits === 'string') {
      // no_client_address: the connection is already gone.
      if (limits === 'no_client_address') res.destroy();
      else sendError(res, limits);
      return;
    }
    if (limits.length === 0 && limits !== resolved) {
      countListed('lifted'); // every limit of the route lifted by limit-scoped allows
      admitted();
      return;
    }
    this.options.engine.decideAll(limits).then(
      (result) => this.answer(res, limits, result, claimHeaders(target.route.auth?.forwardClaims, identity.claims)),
      (error: unknown) => this.failed(res, target.route.id, error),
    );
  }

  private failed(res: ServerResponse, route: string, error: unknown): void {
    this.options.logger.error({ err: error, route }, 'unexpected error in forward-auth');
    sendError(res, 'internal_error');
  }

  /** The gateway's answer without the proxying: the same headers, every limit listed in the IETF fields. */
  private answer(res: ServerResponse, limits: readonly RequestLimit[], result: LimitsDecision, claims: readonly string[]): void {
    if (res.destroyed) return;
    const decision = result.decisions[result.governing]!;
    if (decision.source === 'closed') {
      sendError(res, 'store_unavailable', ['Retry-After', String(retryAfterSeconds(decision))]);
      return;
    }
    const views = limitViews(limits, result);
    if (!result.allowed) {
      const { headers, body } = rejectionOf(views, result.governing, this.headerOptions);
      headers.push('Content-Length', String(Buffer.byteLength(body)));
      res.writeHead(this.refusedStatus, headers).end(body);
      return;
    }
    const headers: string[] = ['Content-Length', '0', ...claims];
    pushLimitsHeaders(headers, views, result.governing, this.headerOptions);
    res.writeHead(200, headers).end();
  }
}

/** forwardClaims as response headers of an admitted request, for the proxy to copy upstream (auth_request_set, authResponseHeaders). */
function claimHeaders(forward: Readonly<Record<string, string>> | undefined, claims: RequestIdentity['claims']): string[] {
  if (forward === undefined || claims === undefined) return [];
  const out: string[] = [];
  for (const [claim, name] of Object.entries(forward)) {
    const value = claimHeaderValue(claims, claim);
    if (value !== undefined) out.push(name, value);
  }
  return out;
}
