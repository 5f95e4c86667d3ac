// /metrics as the operator chose (admin.metrics): open on the admin listener
// (the default), behind an admin token whose role may read, and/or on a
// listener of its own (a port only Prometheus reaches). One handler serves it
// wherever it is.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsAccess } from '../config/types.js';
import { SluiceError } from '../core/errors.js';
import { sendAdminError } from '../dashboard/http-util.js';
import { dashboardRegistry } from '../dashboard/metrics.js';
import { resilienceRegistry } from '../metrics/registry.js';
import { inCall } from '../rules/admin/call-scope.js';
import { errorMessage, type RulesLogger } from '../rules/logger.js';
import { tracingRegistry } from '../metrics/trace-export.js';
import { assertAllowed, type TokenAuth } from './auth.js';
import { processRegistry } from './process-metrics.js';

export interface MetricsEndpoint {
  access: MetricsAccess;
  auth: TokenAuth;
  /** The deadline of the token lookup (the rule store's call timeout). */
  callTimeoutMs: number;
  /** The Prometheus text; default this process's registries (with workers: aggregated over them). */
  text?: (() => Promise<string>) | undefined;
}

/** Answers GET /metrics: refused without a read token when `requireToken`. */
export async function serveMetrics(req: IncomingMessage, res: ServerResponse, endpoint: MetricsEndpoint): Promise<void> {
  if (endpoint.access.requireToken) await inCall(endpoint.callTimeoutMs, async () => assertAllowed(await endpoint.auth.authorize(req), 'read'));
  // Prometheus text format; counters carry no tenant ids or keys.
  const text = endpoint.text ? await endpoint.text() : (await resilienceRegistry.metrics()) + (await dashboardRegistry.metrics()) + (await tracingRegistry.metrics());
  res.writeHead(200, { 'content-type': resilienceRegistry.contentType }).end(text + (await processRegistry.metrics()));
}

/** The answer of the admin listener's /metrics when it is served on its own listener. */
export function movedMetrics(): never {
  throw new SluiceError('ERR_NOT_FOUND', '/metrics is served on its own listener (admin.metrics.listen)');
}

/** admin.metrics.listen: /metrics alone on its own plain-HTTP listener; every other path is a 404. */
export async function startMetricsServer(endpoint: MetricsEndpoint & { access: { listen: NonNullable<MetricsAccess['listen']> } }, logger: RulesLogger): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = path === '/metrics' ? serveMetrics(req, res, endpoint) : Promise.reject(new SluiceError('ERR_NOT_FOUND', 'this listener serves /metrics only'));
    answer.catch((error: unknown) => {
      if (!(error instanceof SluiceError)) logger.error({ err: errorMessage(error) }, 'metrics request failed');
      if (!res.headersSent) sendAdminError(res, error);
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  const { host, port } = endpoint.access.listen;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
