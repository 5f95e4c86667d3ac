// The admin API: its own HTTP listener, separate from the gateway's traffic port.
// /healthz, /readyz and (unless admin.metrics says otherwise: metrics-endpoint.ts)
// /metrics are open (for load balancers, orchestrators and Prometheus; none of
// them names a tenant or a key); every other endpoint
// needs a bearer token (SLUICE_ADMIN_TOKEN or a named one) whose role allows
// it (auth.ts); every write is recorded in the audit log (audit-trail.ts).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { TlsConfig } from '../config/tls.js';
import { createFrontServer } from '../gateway/front-server.js';
import type { AddressInfo } from 'node:net';
import { SluiceError } from '../core/errors.js';
import { errorMessage, type RulesLogger, stderrLogger } from '../rules/logger.js';
import { assertAllowed, type Principal, requiredRole, TokenAuth } from './auth.js';
import { audited } from './audit-trail.js';
import { inCall } from '../rules/admin/call-scope.js';
import { routeTeam } from './team-handlers.js';
import * as h from './handlers.js';
import { routeOverrides } from './override-handlers.js';
import { routePlans } from './plan-handlers.js';
import { liftBlockById, listBlocks } from './block-handlers.js';
import { routeLists } from './list-handlers.js';
import { readJson, sendAdminError, sendJson } from '../dashboard/http-util.js';
import { openApiDocument } from './openapi.js';
import type { Dashboard } from '../dashboard/dashboard.js';
import { serveUi } from '../dashboard/ui-routes.js';
import type { ReloadReport } from './config-reload.js';
import { type ExplainSource, explainFromQuery } from './explain-handler.js';
import { tenantUsage } from './usage-handler.js';
import type { UsageHistory } from '../usage/usage-history.js';
import type { MetricsAccess } from '../config/types.js';
import type { NotificationsView } from '../notify/notifier.js';
import { type MetricsEndpoint, movedMetrics, serveMetrics, startMetricsServer } from './metrics-endpoint.js';

export interface AdminServerOptions extends h.AdminDeps {
  /** Where to listen; host defaults to 127.0.0.1, port 0 picks a free one. */
  listen: { host?: string; port: number };
  /** HTTPS (`admin.tls`), with the gateway's certificate handling; absent: plain HTTP. */
  tls?: TlsConfig | undefined;
  /** SLUICE_ADMIN_TOKEN; without it every endpoint but /healthz, /readyz and /metrics answers 403. */
  token: string | undefined;
  logger?: RulesLogger;
  /** Serves the operator's page at /ui (static files open, its data behind the token). */
  dashboard?: Pick<Dashboard, 'overview'> | undefined;
  /** POST /reload: re-reads the config file (absent: 404). */
  reload?: (() => Promise<ReloadReport>) | undefined;
  /** The Prometheus text of /metrics (with workers: aggregated over them); default this process's registries. */
  metrics?: () => Promise<string>;
  /** GET /explain: the gateway's current config and resolvers (absent: 404). */
  explain?: ExplainSource | undefined;
  /** GET /tenants/{id}/usage: each tenant's consumption over the last hour and day (absent: 404). */
  usage?: UsageHistory | undefined;
  /** admin.metrics: /metrics on its own listener and/or behind a read token; default open on this listener. */
  metricsAccess?: MetricsAccess | undefined;
  /** GET /notifications: the limits' threshold events queued and the last ones sent, failed or dropped (absent: none). */
  notifications?: (() => NotificationsView) | undefined;
}

export interface AdminServer {
  url: string;
  /** admin.metrics.listen's URL, when /metrics has a listener of its own. */
  metricsUrl?: string | undefined;
  close(): Promise<void>;
}

type Route = (req: IncomingMessage, parts: string[], query: URLSearchParams, principal: Principal) => Promise<h.Reply> | h.Reply;

export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const logger = options.logger ?? stderrLogger;
  if (!options.token) logger.warn({}, 'SLUICE_ADMIN_TOKEN is not set: the admin API answers only /healthz, /readyz and /metrics');
  const auth = new TokenAuth(options.token, options.store.team);
  const metrics: MetricsEndpoint = { access: options.metricsAccess ?? { listen: undefined, requireToken: false }, auth, callTimeoutMs: options.store.callTimeoutMs ?? 3_000, text: options.metrics };
  const handle = requestHandler(options, logger, auth, metrics);
  let closing = false;
  const { server } = createFrontServer({}, options.tls, (req, res) => {
    // Once closing, a connection ends with its answer: a page polling on a keep-alive connection cannot hold close() open.
    res.once('finish', () => {
      if (closing) req.socket.end();
    });
    handle(req, res).catch((error) => answerFailure(req, res, error, logger));
  }, undefined, 'admin.tls');
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const url = await listenOn(server, options.listen, options.tls ? 'https' : 'http');
  const listen = metrics.access.listen;
  const own = listen ? await startMetricsServer({ ...metrics, access: { ...metrics.access, listen } }, logger).catch((error: unknown) => {
    server.close();
    throw error;
  }) : undefined;
  return {
    url,
    metricsUrl: own?.url,
    close: () =>
      Promise.all([
        own?.close(),
        new Promise<void>((resolve) => {
          closing = true;
          server.close(() => resolve());
          server.closeIdleConnections();
        }),
      ]).then(() => undefined),
  };
}

function requestHandler(options: AdminServerOptions, logger: RulesLogger, auth: TokenAuth, metrics: MetricsEndpoint): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const route = router(options, auth);
  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://admin');
    const parts = splitPath(url.pathname);
    if (parts[0] === 'ui') return serveUi(req, res, parts, { dashboard: options.dashboard, authorize: (r) => auth.authorize(r) });
    if (parts.length === 1 && parts[0] === 'metrics') return metrics.access.listen ? movedMetrics() : serveMetrics(req, res, metrics);
    const open = parts.length === 1 && (parts[0] === 'healthz' || parts[0] === 'readyz');
    if (!open) {
      // One deadline for every store call the request makes (token, state before, write, audit entry).
      const reply = await inCall(options.store.callTimeoutMs, async () => {
        const principal = await auth.authorize(req);
        const method = req.method ?? 'GET';
        const act = async (): Promise<h.Reply> => {
          assertAllowed(principal, requiredRole(method, parts));
          return parts.length === 1 && parts[0] === 'reload' ? reloadConfig(method, options.reload) : route(req, parts, url.searchParams, principal);
        };
        const write = method !== 'GET' && method !== 'HEAD';
        return write ? audited({ store: options.store, logger }, principal, req, parts, act) : act();
      });
      return sendReply(res, reply);
    }
    sendReply(res, await route(req, parts, url.searchParams, { name: '', role: 'read' }));
  };
}

function sendReply(res: ServerResponse, reply: h.Reply): void {
  if (reply.status === 204) res.writeHead(204).end();
  else sendJson(res, reply.status, reply.body);
}

/** An error answer from the catalogue; only failures that are ours (5xx or unexpected) are logged. */
function answerFailure(req: IncomingMessage, res: ServerResponse, error: unknown, logger: RulesLogger): void {
  if (!(error instanceof SluiceError) || error.status >= 500) {
    logger.error({ err: errorMessage(error), method: req.method, path: pathOf(req) }, 'admin request failed');
  }
  if (!res.headersSent) sendAdminError(res, error);
  else res.destroy();
}

/** Listens and gives the base URL (host defaults to 127.0.0.1, port 0 picks a free one). */
async function listenOn(server: Server, listen: AdminServerOptions['listen'], scheme: 'http' | 'https'): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listen.port, listen.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${scheme}://${host}:${address.port}`;
}

function router(deps: h.AdminDeps & Pick<AdminServerOptions, 'explain' | 'usage' | 'notifications'>, auth: TokenAuth): Route {
  return async (req, parts, query, principal) => {
    const method = req.method ?? 'GET';
    const allow = allowOnly(method);
    const [head, a, b] = parts;
    if (head === 'limits' || head === 'overrides') return routeOverrides(deps, req, parts, allow);
    if (head === 'plans' || head === 'assignments') return routePlans(deps, req, parts, allow);
    if (head === 'lists') return routeLists(deps, req, parts, allow);
    const team = await routeTeam({ deps, auth, principal, method, body: () => readJson(req) }, parts, query, allow);
    if (team) return team;
    const shape = `${head ?? ''}/${parts.length}`;
    switch (shape) {
      case 'healthz/1':
        allow('GET');
        return { status: 200, body: { status: 'ok' } };
      case 'readyz/1':
        allow('GET');
        return h.readiness(deps);
      case 'openapi.json/1':
        allow('GET');
        return { status: 200, body: openApiDocument() };
      case 'rules/1':
        allow('GET');
        return h.listRules(deps, query);
      case 'rules/3':
        allow('GET', 'PUT', 'DELETE');
        if (method === 'GET') return h.getRule(deps, a!, b!);
        if (method === 'DELETE') return h.deleteRule(deps, a!, b!);
        return h.putRule(deps, a!, b!, await readJson(req));
      case 'keys/1':
        allow('GET', 'POST');
        return method === 'GET' ? h.listKeys(deps, query) : h.createKey(deps, await readJson(req));
      case 'keys/2':
        allow('DELETE');
        return h.revokeKey(deps, a!);
      case 'notifications/1':
        allow('GET');
        return { status: 200, body: deps.notifications?.() ?? { pending: 0, recent: [] } };
      case 'explain/1':
        allow('GET');
        return explainFromQuery(deps.explain, deps.engine, query);
      case 'tenants/3':
        if (b !== 'usage') break;
        allow('GET');
        return tenantUsage(deps.explain, deps.engine, deps.usage, a!);
      case 'blocks/1':
        allow('GET');
        return listBlocks(deps.engine, query);
      case 'blocks/2':
        allow('DELETE');
        return liftBlockById(deps.engine, a!);
      case 'buckets/3':
        allow('GET', 'DELETE');
        return method === 'GET' ? h.inspectBucket(deps, a!, b!, query) : h.resetBucket(deps, a!, b!);
    }
    throw new SluiceError('ERR_NOT_FOUND', `no endpoint ${method} /${parts.join('/')}; see GET /openapi.json`);
  };
}

function allowOnly(method: string): (...methods: string[]) => void {
  return (...methods) => {
    if (!methods.includes(method)) throw new SluiceError('ERR_METHOD_NOT_ALLOWED', `method ${method} not allowed; use ${methods.join(', ')}`, 'method');
  };
}

/** An invalid file is a 400 naming file:line and field; the old config keeps serving. */
async function reloadConfig(method: string | undefined, reload: AdminServerOptions['reload']): Promise<h.Reply> {
  if (method !== 'POST') throw new SluiceError('ERR_METHOD_NOT_ALLOWED', `method ${method} not allowed; use POST`, 'method');
  if (!reload) throw new SluiceError('ERR_NOT_FOUND', 'config reload is not available on this instance (it was not started by sluice start)');
  const report = await reload();
  if (report.outcome === 'invalid') throw new SluiceError('ERR_CONFIG_INVALID', report.error);
  return { status: 200, body: report };
}

/** Path segments, percent-decoded; a bad escape is a 400, not a crash. */
function splitPath(pathname: string): string[] {
  return pathname
    .split('/')
    .filter((part) => part !== '')
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        throw new SluiceError('ERR_BAD_REQUEST', 'malformed percent-encoding', 'path');
      }
    });
}

/** The path for a log line; an override's selector (an address, a header value) is left out. */
function pathOf(req: Pick<IncomingMessage, 'url'>): string {
  return (req.url ?? '/').split('?')[0]!.replace(/^(\/limits\/[^/]*\/overrides)\/.*$/, '$1/…');
}
