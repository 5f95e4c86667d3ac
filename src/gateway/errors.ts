// The gateway's own answers (not the upstream's): small JSON bodies built once.
import type { ServerResponse } from 'node:http';

export type GatewayErrorName =
  | 'missing_api_key'
  | 'unknown_api_key'
  | 'no_route'
  | 'bad_request'
  | 'body_too_large'
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'store_unavailable'
  | 'queue_full'
  | 'internal_error'
  | 'request_timeout'
  | 'upgrade_not_supported'
  | 'missing_limit_header'
  | 'cost_exceeds_capacity';

const STATUS: Record<GatewayErrorName, number> = {
  missing_api_key: 401,
  unknown_api_key: 401,
  no_route: 404,
  bad_request: 400,
  body_too_large: 413,
  upstream_unreachable: 502,
  upstream_timeout: 504,
  store_unavailable: 503,
  queue_full: 503,
  internal_error: 500,
  request_timeout: 408,
  upgrade_not_supported: 501,
  missing_limit_header: 400,
  cost_exceeds_capacity: 503,
};

const BODIES = new Map<GatewayErrorName, Buffer>(
  (Object.keys(STATUS) as GatewayErrorName[]).map((name) => [name, Buffer.from(`{"error":"${name}"}`)]),
);

/**
 * Answers with a gateway error unless a response is already under way, in which
 * case the connection is cut (the client sees a truncated response, not a lie).
 */
export function sendError(res: ServerResponse, name: GatewayErrorName, extraHeaders?: string[], close = false): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const body = BODIES.get(name)!;
  const headers = ['Content-Type', 'application/json', 'Content-Length', String(body.length)];
  if (extraHeaders) headers.push(...extraHeaders);
  // After a refused body, closing beats reading (and discarding) the rest of it.
  if (close) headers.push('Connection', 'close');
  res.writeHead(STATUS[name], headers);
  res.end(body);
}
