// The gateway listener's own protection: node's parse errors answered instead
// of dropped, and the header and request deadlines enforced close to their value.
import type { Socket } from 'node:net';
import type { SluiceConfig } from '../config/types.js';
import { gatewayStatus } from '../http/errors.js';
import type { FrontOptions } from './front-server.js';
import { rawAnswer } from './unsupported.js';

/** A request node could not parse: answer 400 (431 for oversized headers) instead of dropping the socket; returns the status sent, if any. */
export function answerClientError(error: Error & { code?: string }, socket: Socket): number | undefined {
  const busy = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  // A TLS failure (a handshake that timed out or went wrong) has no HTTP to answer in: an answer
  // written there waits for a handshake that never ends, holding the connection open.
  const tlsFailure = error.code?.startsWith('ERR_TLS_') === true || error.code?.startsWith('ERR_SSL_') === true;
  if (error.code === 'ECONNRESET' || tlsFailure || !socket.writable || busy) {
    socket.destroy();
    return undefined;
  }
  const name = error.code === 'HPE_HEADER_OVERFLOW' ? 'headers_too_large' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'request_timeout' : 'bad_request';
  rawAnswer(socket, name);
  return gatewayStatus(name);
}

/** Node checks header and request deadlines only every `connectionsCheckingInterval` (30 s by default): tick often enough to cut close to the value. */
export function listenerOptions(limits: SluiceConfig['limits']): FrontOptions {
  const tightest = Math.min(limits.headerTimeoutMs, limits.requestTimeoutMs);
  return {
    maxHeaderSize: limits.maxHeaderBytes,
    headersTimeout: limits.headerTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // A TLS handshake is part of getting the request's head: node's own bound is 120 s.
    handshakeTimeout: limits.headerTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(500, Math.floor(tightest / 10))),
    http2: { maxConcurrentStreams: limits.http2MaxConcurrentStreams, maxResetsPerSecond: limits.http2MaxResetsPerSecond, headerTimeoutMs: limits.headerTimeoutMs, keepAliveTimeoutMs: limits.keepAliveTimeoutMs },
  };
}

/**
 * Methods are case-sensitive tokens (RFC 9110 §9.1): `post` is not POST and
 * must not skip a `methods: [POST]` route. node's HTTP/1.1 parser already
 * refuses anything but its known upper-case methods; HTTP/2 hands `:method` on
 * as sent, so the gateway refuses what nginx's HTTP/2 module refuses (a method
 * of anything but A-Z, '_' and '-') rather than guess what a lower-case one meant.
 */
export function acceptableMethod(method: string | undefined): boolean {
  return method !== undefined && /^[A-Z_-]+$/.test(method);
}
