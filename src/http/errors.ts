// The gateway's own answers (not the upstream's): small JSON bodies built once,
// named and given their status by the error catalogue (core/error-codes.ts),
// and the 401 of a refused JWT, whose body names the check that failed.
import type { ServerResponse } from 'node:http';
import { constants as http2Constants, type ServerHttp2Stream } from 'node:http2';
import { AUTH_FAILURES, type AuthFailure, countAuthFailure, isClientFailure, wwwAuthenticate } from '../auth/failures.js';
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
  if (name === 'missing_limit_claim') {
    countAuthFailure('bad_claim');
    headers.push('WWW-Authenticate', wwwAuthenticate('bad_claim'));
  }
  const retryAfter = defaultRetryAfter(name);
  if (retryAfter !== undefined && !extraHeaders?.includes('Retry-After')) headers.push('Retry-After', String(retryAfter));
  // After a refused body, closing beats reading (and discarding) the rest of it.
  if (close) abandonBody(res, headers);
  res.writeHead(gatewayStatus(name), headers);
  res.end(body);
}

/**
 * The request's body will not be read: over HTTP/1.1 the connection closes
 * after the answer (`headers`, when given, get `Connection: close`); over
 * HTTP/2 the stream is reset with NO_ERROR once the answer is out (RFC 9113
 * §8.1), so the client stops sending and the connection's flow-control window
 * is not left full of a body nobody reads.
 */
export function abandonBody(res: ServerResponse, headers?: string[]): void {
  if (res.req.httpVersionMajor < 2) {
    if (headers) headers.push('Connection', 'close');
    else res.shouldKeepAlive = false;
    return;
  }
  const stream = (res as unknown as { stream?: ServerHttp2Stream }).stream;
  res.once('finish', () => stream?.close(http2Constants.NGHTTP2_NO_ERROR));
}

/** The bodies of refused tokens, one per reason: `{"error":"invalid_token","reason":…,"message":…}` (the token never in it). */
const AUTH_BODIES = new Map<AuthFailure, Buffer>(
  (Object.keys(AUTH_FAILURES) as AuthFailure[]).map((reason) => {
    const error: GatewayErrorName = isClientFailure(reason) ? 'invalid_token' : 'auth_unavailable';
    return [reason, Buffer.from(JSON.stringify({ error, reason, message: AUTH_FAILURES[reason] }))];
  }),
);

/** A request whose token was refused: 401 with its WWW-Authenticate challenge, or 503 when the key set is out of reach. Counted in /metrics. */
export function sendAuthFailure(res: ServerResponse, reason: AuthFailure): void {
  countAuthFailure(reason);
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const body = AUTH_BODIES.get(reason)!;
  const client = isClientFailure(reason);
  const headers = ['Content-Type', 'application/json', 'Content-Length', String(body.length), 'Cache-Control', 'no-store'];
  headers.push(...(client ? ['WWW-Authenticate', wwwAuthenticate(reason)] : ['Retry-After', String(defaultRetryAfter('auth_unavailable'))]));
  if (!res.req.complete) abandonBody(res, headers); // the body of a refused request is not read
  res.writeHead(gatewayStatus(client ? 'invalid_token' : 'auth_unavailable'), headers);
  res.end(body);
}
