// The gateway's own answers (not the upstream's): small JSON bodies built once,
// named and given their status by the error catalogue (core/error-codes.ts).
import type { ServerResponse } from 'node:http';
import { defaultRetryAfter, GATEWAY_ERRORS, type GatewayErrorName, gatewayErrorBody } from '../core/error-codes.js';

export type { GatewayErrorName } from '../core/error-codes.js';

const BODIES = new Map<GatewayErrorName, Buffer>(
  (Object.keys(GATEWAY_ERRORS) as GatewayErrorName[]).map((name) => [name, Buffer.from(gatewayErrorBody(name))]),
);

/** The HTTP status the gateway answers `name` with. */
export function gatewayStatus(name: GatewayErrorName): number {
  return GATEWAY_ERRORS[name].status;
}

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
  const retryAfter = defaultRetryAfter(name);
  if (retryAfter !== undefined && !extraHeaders?.includes('Retry-After')) headers.push('Retry-After', String(retryAfter));
  // After a refused body, closing beats reading (and discarding) the rest of it.
  if (close) headers.push('Connection', 'close');
  res.writeHead(gatewayStatus(name), headers);
  res.end(body);
}
