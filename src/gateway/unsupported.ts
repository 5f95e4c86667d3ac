// Requests node hands to 'connect' (CONNECT) instead of the request handler:
// the gateway is no forward proxy, and says so in a proper response instead of
// dropping the socket. And which upgrades are WebSocket ones.
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import { Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import { gatewayErrorBody } from '../core/error-codes.js';
import { type GatewayErrorName, gatewayStatus, sendError } from './errors.js';

/**
 * CONNECT host:port: 501 with a JSON body, then the socket is closed. Over
 * HTTP/2 node hands the same event a request and a response instead of a
 * socket (a CONNECT stream, RFC 8441's WebSocket among them): answered on it.
 */
export function answerConnect(_req: IncomingMessage, socket: Socket | ServerResponse): void {
  if (socket instanceof Http2ServerResponse) sendError(socket as unknown as ServerResponse, 'method_not_supported');
  else rawAnswer(socket as Socket, 'method_not_supported');
}

/**
 * Whether an upgrade request asks for WebSocket (a tunnel, tunnel.ts). An upgrade
 * to anything else (e.g. h2c) may be ignored (RFC 9110 §7.8) and is served as HTTP/1.1.
 */
export function wantsWebSocket(req: IncomingMessage): boolean {
  const upgrade = req.headers.upgrade;
  return upgrade !== undefined && /\bwebsocket\b/i.test(upgrade);
}

/** Writes a whole response on a socket node's HTTP layer no longer manages. */
export function rawAnswer(socket: Socket, name: GatewayErrorName): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = gatewayStatus(name);
  const body = gatewayErrorBody(name);
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
}
