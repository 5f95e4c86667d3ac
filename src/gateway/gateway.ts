// The gateway, one request at a time: route, key → tenant (unless the route is
// anonymous; on a route with auth: jwt, the verified token first), the request's limits (the route's and the global ones), decided
// together by the engine, then forward, hold (shaping) or refuse. The front is
// node's http server; nothing a client sends can throw out of here.
//
// refuseRated and answerUnlimitable, below: the gateway's answers to a request it will not forward: refused by a rate
// limit (429), or whose limits cannot be formed (400, 503, or a connection
// already gone). Never forwarded unlimited.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import type { JwtVerifier } from '../auth/jwt-verifier.js';
import { VerifierPool } from '../auth/verifier-pool.js';
import type { RouteConfig, SluiceConfig } from '../config/types.js';
import { parseIp } from '../core/ip-address.js';
import { abandonBody, gatewayStatus, sendAuthFailure, sendError } from '../http/errors.js';
import { type HeaderOptions, type LimitView, limitViews, pushLimitsHeaders, type Rejection, rejectionOf, retryAfterSeconds } from '../http/headers.js';
import { requestHost } from '../http/hop-by-hop.js';
import { identityOfToken, listVerdict, type RequestIdentity, tenantOfRequest } from '../http/identify.js';
import { type CompiledRoute, RouteTable, screenRequest } from '../http/routes.js';
import type { ConcurrencyLimiter } from '../limiter/concurrency/concurrency-limiter.js';
import { localConcurrencyLimiter } from '../limiter/concurrency/local.js';
import type { Engine, LimitsDecision } from '../limiter/engine/engine.js';
import { CombinedLists, type ListChecker, ListSet } from '../lists/list-set.js';
import type { ListVerdict } from '../lists/types.js';
import { type NotificationsView, Notifier } from '../notify/notifier.js';
import { ClientIpResolver } from '../request-limits/client-ip.js';
import { countListed } from '../metrics/lists.js';
import { countDecision, countersFor, type LimitCounters } from '../metrics/limit-decisions.js';
import type { LimitProblem, LimitRequest } from '../request-limits/request-limits.js';
import type { RuleResolver, TenantResolver } from '../rules/types.js';
import type { RequestTrace, Tracing } from '../tracing/types.js';
import { Settlement } from '../usage/settlement.js';
import type { UsageObserver } from '../usage/usage-recorder.js';
import { clientLeft } from './client-left.js';
import { ConcurrencyGate } from './concurrency-gate.js';
import { Drain } from './drain.js';
import { createFrontServer, type FrontServer } from './front-server.js';
import { AfterRead } from './h2-after-read.js';
import { acceptableMethod, answerClientError, listenerOptions } from './listener.js';
import { forward, Upstreams } from './proxy.js';
import type { BodyLimits } from './request-body.js';
import { readRequestJson, type RequestJson } from './request-json.js';
import { type Exchange, NO_ROUTE, NO_VERDICT, type RequestObserver, watchRequest } from './request-observer.js';
import { ResetCooldown } from './reset-cooldown.js';
import { type LimitedTarget, routeTarget } from './route-target.js';
import { ShapingQueue } from './shaping.js';
import { Tunnels, type Upgrade } from './tunnel.js';
import { routeUpgrades } from './unsupported.js';

/** Marks a request already answered (a 401) while its tenant was looked up. */
const ANSWERED = Symbol('answered');

export interface GatewayOptions {
  config: SluiceConfig;
  engine: Engine;
  rules: RuleResolver;
  tenants: TenantResolver;
  logger: Logger;
  /** The `kind: concurrency` limits' leases (app.ts: on the engine's store); default: in process. */
  concurrency?: ConcurrencyLimiter;
  /** The rule store's allow and deny lists, applied beside the config file's (app.ts: the rule cache's); absent: the config file's only. */
  storedLists?: (() => ListSet) | undefined;
  observer?: RequestObserver; // told each request's verdict (none if answered before the decision), status and times (the dashboard's history)
  usage?: UsageObserver; // told each decided request's limits and outcome (each tenant's consumption: usage/usage-recorder.ts)
  /** A span per request, its traceparent passed upstream (docs/observability.md); absent: tracing off, one check per request. */
  tracing?: Tracing | undefined;
  /** Limits' `notify:` events (docs/notifications.md); default: one from the config, deduplicated in this process only. Closed with the gateway. */
  notifier?: Notifier | undefined;
}

/** What follows a request through its steps: the dashboard's watch and the request's span. */
type Watch = Pick<Exchange, 'watched' | 'trace'>;

/** A request whose route matched and whose tenant is known: what the lists and the limits decide on. */
interface Identified {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly identity: RequestIdentity;
  readonly match: CompiledRoute<LimitedTarget>;
  readonly watch: Watch;
}

export class Gateway {
  readonly server: Server;
  private readonly front: FrontServer;
  private readonly upstreams = new Upstreams();
  private readonly shaping: ShapingQueue;
  private readonly drain = new Drain();
  private readonly upgrades = new WeakMap<IncomingMessage, Upgrade>();
  private readonly tunnels = new Tunnels(() => this.tunnelIdleMs);
  private readonly afterRead = new AfterRead((req, res) => this.handle(req, res));
  private tunnelIdleMs!: number;
  private readonly engine: Engine;
  private readonly log: Logger;
  private readonly observer: RequestObserver | undefined;
  private readonly usage: UsageObserver | undefined;
  private readonly tracing: Tracing | undefined;
  private readonly gate: ConcurrencyGate;
  private readonly notifier: Notifier;
  /** One JwtVerifier per auth section (explain verifies a sample's token with the same ones: app.ts). */
  readonly verifiers = new VerifierPool();
  // What a config reload replaces (configure): each field swapped whole, so a request reads either the old or the new value.
  private routes!: RouteTable<LimitedTarget>;
  private keyHeader!: string;
  private headerOptions!: HeaderOptions;
  private maxBodyBytes!: number;
  private bodyLimits!: BodyLimits;
  private tenants!: TenantResolver;
  private counters!: ReadonlyMap<string, LimitCounters>;
  private clientIp!: ClientIpResolver;
  private lists!: ListChecker;

  constructor(options: GatewayOptions) {
    const { config } = options;
    this.engine = options.engine;
    this.log = options.logger;
    this.observer = options.observer;
    this.usage = options.usage;
    this.tracing = options.tracing;
    this.shaping = new ShapingQueue(config.limits.maxQueued);
    this.gate = new ConcurrencyGate(options.concurrency ?? localConcurrencyLimiter(), this.log);
    this.notifier = options.notifier ?? new Notifier(config.notifications, { logger: this.log });
    this.reconfigure(options);
    // A trusted proxy's address is never refused after a rapid-reset cut: every client behind it would lose the gateway.
    const resetCooldown = new ResetCooldown(config.limits.http2ResetCooldownMs, (address) => {
      const peer = parseIp(address);
      return peer !== undefined && this.clientIp.isTrusted(peer);
    });
    this.front = createFrontServer({ ...listenerOptions(config.limits), ServerResponse: this.drain.Response, resetCooldown }, config.tls, (req, res) => this.afterRead.accept(req, res), config.tls?.redirectHttp);
    this.server = this.front.server;
    this.server.keepAliveTimeout = config.limits.keepAliveTimeoutMs;
    this.server.on('clientError', (error, socket) => {
      const status = answerClientError(error, socket as Socket);
      if (status !== undefined) this.observer?.request(NO_ROUTE, NO_VERDICT, status, 0, undefined);
    });
    routeUpgrades(this.server, this.upgrades, (req, res) => this.afterRead.accept(req, res));
  }

  /** A reloaded config (routes, upstreams, limits, keys, header and body options); requests past routing finish as they began. */
  reconfigure({ config, rules, tenants, storedLists }: Pick<GatewayOptions, 'config' | 'rules' | 'tenants' | 'storedLists'>): void {
    const clientIp = new ClientIpResolver(config.clientIp);
    const configLists = new ListSet(config.lists);
    this.lists = storedLists ? new CombinedLists([() => configLists, storedLists]) : configLists;
    this.clientIp = clientIp;
    const maxBodyBytes = config.limits.maxBodyBytes;
    const routes = new RouteTable(config.routes, (route: RouteConfig) => routeTarget(route, this.upstreams, rules, clientIp, config.clientIp.ipv6Prefix));
    this.counters = countersFor(config.routes);
    this.gate.configure(config.headers, this.counters);
    this.tenants = tenants;
    this.verifiers.reload(config.routes.map((route) => route.auth));
    this.keyHeader = config.tenants.header;
    this.headerOptions = config.headers;
    this.maxBodyBytes = maxBodyBytes;
    this.tunnelIdleMs = config.limits.websocketIdleTimeoutMs;
    this.bodyLimits = { bufferBytes: Math.min(config.limits.bufferBodyBytes, maxBodyBytes), maxBytes: maxBodyBytes, idleMs: config.limits.bodyIdleTimeoutMs };
    this.routes = routes;
    this.notifier.reconfigure(config.notifications);
    this.upstreams.checkHealth(routes.targets());
    this.front?.reloadCertificates(config.tls); // renewed certificates: new handshakes use them, open connections keep theirs
  }

  /** True from the start of close(): /readyz answers 503 and every response closes its connection. */
  get draining(): boolean {
    return this.drain.draining;
  }

  /** Upstream requests running or queued (0 once every upstream connection is idle). */
  get upstreamsInFlight(): number {
    return this.upstreams.inFlight();
  }

  listen(host: string, port: number): Promise<AddressInfo> {
    return this.front.listen(host, port);
  }

  /** Drains (see drain.ts): in-flight requests finish for up to `graceMs`, then what is left is cut and the pools close. */
  async close(graceMs = 10_000): Promise<void> {
    this.tunnels.closeAll();
    this.front.closeRedirect();
    await this.drain.run(this.server, graceMs, () => this.upstreams.destroy(), this.front.sessions);
    await Promise.all([this.upstreams.close(), this.gate.close(), this.notifier.close()]);
  }

  /** The notifications queued and the last ones sent, failed or dropped (GET /notifications). */
  notifications(): NotificationsView {
    return this.notifier.view();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    if (this.tracing === undefined) {
      this.serve(req, res, undefined);
      return;
    }
    const trace = this.tracing.request(req, res);
    trace.run(() => this.serve(req, res, trace));
  }

  private serve(req: IncomingMessage, res: ServerResponse, trace: RequestTrace | undefined): void {
    try {
      const watch = watchRequest(this.observer, res); // answered before the decision too: 401, 404, 413 ...
      if (!acceptableMethod(req.method)) {
        sendError(res, 'bad_request');
        return;
      }
      const refused = screenRequest(req); // a bad Host, path or upgrade: 400 (routes.ts); else req.url normalized
      if (refused !== undefined) {
        sendError(res, refused, undefined, true);
        return;
      }
      const match = this.routes.match(req.method ?? 'GET', req.url ?? '/', requestHost(req));
      if (watch && match) watch.route = match.route.id;
      const verifier = this.verifiers.of(match?.route.auth);
      if (verifier !== undefined) {
        this.authenticate(req, res, match!, { watched: watch, trace }, verifier);
        return;
      }
      const identity = this.tenantOf(req, res, match);
      if (identity === ANSWERED) return;
      if (match === undefined) {
        sendError(res, 'no_route');
        return;
      }
      this.identified(req, res, identity, match, { watched: watch, trace });
    } catch (error) {
      this.failed(res, undefined, undefined, error);
    }
  }

  /** A route with auth: jwt: the token verified before anything else (identify.ts); a refused one never reaches the limits or the upstream. */
  private authenticate(req: IncomingMessage, res: ServerResponse, match: CompiledRoute<LimitedTarget>, watch: Watch, verifier: JwtVerifier): void {
    identityOfToken(verifier, { route: match.route, headers: req.headers, rawHeaders: req.rawHeaders, keyHeader: this.keyHeader, tenants: this.tenants }).then(
      (found) => {
        if (clientLeft(res)) return;
        if ('refused' in found) {
          watch.trace?.routed(match.route.id, match.route.path, undefined);
          sendAuthFailure(res, found.refused);
        } else if ('problem' in found) sendError(res, found.problem);
        else this.identified(req, res, found, match, watch);
      },
      (error: unknown) => this.failed(res, undefined, match.route.id, error),
    );
  }

  private identified(req: IncomingMessage, res: ServerResponse, identity: RequestIdentity, match: CompiledRoute<LimitedTarget>, watch: Watch): void {
    watch.trace?.routed(match.route.id, match.route.path, identity.tenant);
    try {
      const length = req.headers['content-length'];
      if (length !== undefined && Number(length) > this.maxBodyBytes) {
        sendError(res, 'body_too_large', undefined, true);
        return;
      }
      this.decide({ req, res, identity, match, watch });
    } catch (error) {
      this.failed(res, identity.tenant, match.route.id, error);
    }
  }

  /** The API key's tenant and plan (identify.ts); a missing or unknown key is answered here. */
  private tenantOf(req: IncomingMessage, res: ServerResponse, match: CompiledRoute<LimitedTarget> | undefined): RequestIdentity | typeof ANSWERED {
    const found = tenantOfRequest(match?.route, req.headers, this.keyHeader, this.tenants, req.rawHeaders);
    if ('tenant' in found) return found;
    sendError(res, found.problem);
    return ANSWERED;
  }

  private decide(identified: Identified): void {
    const { req, res, identity, match } = identified;
    const { watched, trace } = identified.watch;
    const route = match.route.id;
    const { tenant } = identity;
    const listed = listVerdict(this.lists, this.clientIp, req, route, identity);
    if (listed.action === 'deny') {
      countListed('denied'); // before any limit is charged; the body names the code, never the entry
      sendError(res, 'denied');
      return;
    }
    if (listed.action === 'allow') {
      if (watched) watched.reached = true;
      countListed('allowlisted'); // no limit, no concurrency lease: counted as allowed on the page
      this.forward({ req, res, tenant, route, target: match.target, limits: [], watched, claims: identity.claims, trace }, []);
      return;
    }
    if (match.target.limits.readsJson) {
      // A limit reads the JSON body (a body key, an estimate from it): read before deciding, then sent on as read.
      readRequestJson(req, this.bodyLimits).then(
        (body) => this.limited(identified, listed, body),
        (error: unknown) => this.failed(res, tenant, route, error),
      );
      return;
    }
    this.limited(identified, listed, undefined);
  }

  /** The request's limits formed (its JSON body read when they need it), then decided: concurrency first, then the rates. */
  private limited(identified: Identified, listed: ListVerdict, body: RequestJson | undefined): void {
    const { req, res, identity, match } = identified;
    const { watched, trace } = identified.watch;
    const route = match.route.id;
    const { tenant } = identity;
    if (body?.read.kind === 'failed') {
      if (body.read.reason === 'aborted') res.destroy();
      else sendError(res, body.read.reason, undefined, true);
      return;
    }
    // The limits read the token's claims (key: {claim}) and the JSON body; the rules, the plan the identity names.
    const request: LimitRequest = identity.claims === undefined && body === undefined ? req : { headers: req.headers, socket: req.socket, identity, json: body?.json };
    const resolved = match.target.limits.resolve(tenant, request, identity.plan);
    if (typeof resolved === 'string') {
      answerUnlimitable(res, resolved, this.log, { tenant, route });
      return;
    }
    const limits = listed.exemptLimits.size === 0 ? resolved : resolved.filter((limit) => !listed.exemptLimits.has(limit.limitId));
    if (limits.length < resolved.length) countListed('lifted');
    if (watched) watched.reached = true;
    const exchange: Exchange = { req, res, tenant, route, target: match.target, limits, watched, claims: identity.claims, trace, body: body?.read };
    // Concurrency first (concurrency-gate.ts): a request it refuses is charged to no rate bucket.
    const problem = this.gate.admit(match.target.limits, { tenant, request }, req, res, () => this.decideRates(exchange));
    if (problem !== undefined) answerUnlimitable(res, problem, this.log, { tenant, route });
  }

  private decideRates(exchange: Exchange): void {
    const { res, tenant, route, limits } = exchange;
    if (limits.length === 0) this.forward(exchange, []); // a route with concurrency limits only
    else this.engine.decideAll(limits).then(
      (outcome) => this.decided(exchange, outcome),
      (error: unknown) => this.failed(res, tenant, route, error),
    );
  }

  private decided(exchange: Exchange, outcome: LimitsDecision): void {
    const { res, tenant, route, limits } = exchange;
    exchange.watched?.decided(outcome);
    this.usage?.decided(tenant, limits, outcome);
    try {
      this.notifier.observe(tenant, route, limits, outcome.decisions); // a threshold reached is queued, sent off this path
      if (clientLeft(res)) return; // the client left (or reset its stream) while we decided
      countDecision(this.counters, limits, outcome);
      const views = limitViews(limits, outcome);
      const governing = outcome.decisions[outcome.governing]!;
      if (!outcome.allowed && governing.source === 'closed') {
        sendError(res, 'store_unavailable', ['Retry-After', String(retryAfterSeconds(governing))]);
        return;
      }
      if (!outcome.allowed) {
        refuseRated(exchange.req, res, rejectionOf(views, outcome.governing, this.headerOptions), this.log, { tenant, route, ...views[outcome.governing]! });
        return;
      }
      const usage = this.usage;
      exchange.settlement = Settlement.of(this.engine, limits, outcome.enforced ?? outcome.decisions, usage && ((limit, delta) => usage.settled(tenant, limit, delta)));
      const limitHeaders: string[] = [];
      pushLimitsHeaders(limitHeaders, views, outcome.governing, this.headerOptions);
      // Shaping: the request waits for the longest delay any limit asks.
      let delayMs = 0;
      for (const decision of outcome.decisions) delayMs = Math.max(delayMs, decision.delayMs);
      if (delayMs > 0) this.hold(exchange, delayMs, limitHeaders);
      else this.forward(exchange, limitHeaders);
    } catch (error) {
      this.failed(res, tenant, route, error);
    }
  }

  /** Shaping: the request waits its delay, then goes upstream; a full queue is a 503. */
  private hold(exchange: Exchange, delayMs: number, limitHeaders: string[]): void {
    const { res, tenant, route } = exchange;
    const held = this.shaping.hold(res, delayMs, () => this.forward(exchange, limitHeaders));
    if (held) return;
    this.log.warn({ tenant, route, held: this.shaping.size }, 'shaping queue full');
    sendError(res, 'queue_full', ['Retry-After', String(Math.max(1, Math.ceil(delayMs / 1000)))]);
    void exchange.settlement?.settle({ status: res.statusCode, complete: false, aborted: false }); // never forwarded: what it reserved goes back
  }

  private forward({ req, res, tenant, route, target, claims, trace, body, settlement }: Exchange, limitHeaders: string[]): void {
    const upgrade = this.upgrades.get(req);
    if (upgrade) {
      this.tunnels.open101(req, res, { upgrade, target, limitHeaders, context: { tenant, route, claims, propagate: trace && ((headers) => trace.inject(headers)) } });
      return;
    }
    const upstream = trace?.upstream(req.method ?? 'GET');
    forward(req, res, { target, extraHeaders: limitHeaders, bodyLimits: this.bodyLimits }, { tenant, route, claims, propagate: upstream && ((headers) => upstream.inject(headers)), body, tap: settlement?.reader }).then(
      (outcome) => {
        upstream?.end(outcome, res.statusCode);
        // After the last byte was handed to the client: the settlement never delays it, and never fails it.
        void settlement?.settle({ status: res.statusCode, complete: outcome === 'ok', aborted: outcome === 'aborted' });
        if (outcome !== 'ok' && outcome !== 'aborted' && outcome !== 'request_timeout') this.log.warn({ tenant, route, outcome }, 'upstream request failed');
      },
      (error: unknown) => this.failed(res, tenant, route, error),
    );
  }

  private failed(res: ServerResponse, tenant: string | undefined, route: string | undefined, error: unknown): void {
    this.log.error({ tenant, route, err: error }, 'unexpected error in the limiter path');
    try {
      sendError(res, 'internal_error');
    } catch {
      res.destroy();
    }
  }
}

interface Context {
  tenant: string | undefined;
  route: string;
}

/** The 429 of a rate limit: its rejection's headers and body; a body still on its way is not waited for. */
export function refuseRated(req: IncomingMessage, res: ServerResponse, { headers, body }: Rejection, log: Logger, refused: Context & LimitView): void {
  if (!req.complete) abandonBody(res);
  headers.push('Content-Length', String(Buffer.byteLength(body)));
  res.writeHead(gatewayStatus('rate_limited'), headers);
  res.end(body);
  // The limit's id, never the bucket: that may hold a client's address.
  log.debug({ tenant: refused.tenant, route: refused.route, limit: refused.limitId, rule: refused.from, retryAfterMs: refused.decision.retryAfterMs, ...(refused.decision.blockedUntilMs === undefined ? {} : { blockedUntilMs: refused.decision.blockedUntilMs }) }, refused.decision.blockedUntilMs === undefined ? 'rate limited' : 'blocked by a penalty box');
}

/** A request whose limits cannot be formed: answered, never forwarded unlimited. */
export function answerUnlimitable(res: ServerResponse, problem: LimitProblem, log: Logger, { tenant, route }: Context): void {
  if (problem === 'no_client_address') {
    res.destroy(); // the connection is already gone
    return;
  }
  if (problem === 'cost_exceeds_capacity') log.warn({ tenant, route }, "the route's cost exceeds the capacity of the tenant's rule: no request can pass");
  sendError(res, problem);
}
