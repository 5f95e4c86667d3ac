// Helpers for the tracing tests: a gateway exporting OTLP/JSON to the test's
// own receiver (tracing/ in the config, the OTEL_* variables through `env`),
// and an upstream that keeps the headers each request brought.
import type { IncomingHttpHeaders } from 'node:http';
import type { RunningSluice, StartOptions } from '../../src/app.js';
import { startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

export const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
export const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
export const CLIENT_SPAN = 'b7ad6b7169203331';

/** `00-<trace>-<span>-<flags>` split. */
export function parseTraceparent(value: unknown): { traceId: string; spanId: string; flags: string } {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(String(value));
  if (!match) throw new Error(`not a traceparent: ${String(value)}`);
  return { traceId: match[1]!, spanId: match[2]!, flags: match[3]! };
}

export interface HeaderUpstream extends TestUpstream {
  seen: IncomingHttpHeaders[];
}

export async function headerUpstream(): Promise<HeaderUpstream> {
  const seen: IncomingHttpHeaders[] = [];
  const upstream = await startUpstream((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
  });
  return Object.assign(upstream, { seen });
}

/** One anonymous route /orders/:id limited to `limit` requests a minute, tracing as `tracing` (YAML flow map) says. */
export function tracedGateway(upstream: string, tracing: string, options: StartOptions & { limit?: number } = {}): Promise<RunningSluice> {
  const yaml = `
routes:
  - id: orders
    path: /orders/:id
    upstream: ${upstream}
    anonymous: true
    limits: [{ id: per-route, key: route, rule: { policy: fixed_window, limit: ${options.limit ?? 1}, windowMs: 60000 } }]
tracing: ${tracing}
`;
  return startGateway(yaml, {}, { env: {}, ...options });
}
