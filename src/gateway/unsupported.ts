// Requests node hands to 'connect' (CONNECT) and 'upgrade' instead of the
// request handler. The gateway is no forward proxy: a CONNECT gets a proper 501
// instead of a dropped socket, unless it is an HTTP/2 WebSocket stream (RFC
// 8441). Upgrades and those streams take the normal path, remembered as
// upgrades so that, admitted, they end in a tunnel (tunnel.ts).
import { type IncomingMessage, type Server, ServerResponse, STATUS_CODES } from 'node:http';
import { Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import { gatewayErrorBody } from '../core/error-codes.js';
import { type GatewayErrorName, gatewayStatus, sendError } from '../http/errors.js';
import type { Upgrade } from './tunnel.js';
import { webSocketOverHttp2 } from './tunnel-http2.js';

/** Sends upgrades and CONNECTs to `handle`, each WebSocket one noted in `upgrades`; other CONNECTs get 501. */
export function routeUpgrades(server: Server, upgrades: WeakMap<IncomingMessage, Upgrade>, handle: (req: IncomingMessage, res: ServerResponse) => void): void {
  server.on('connect', (req: IncomingMessage, socket: Socket | ServerResponse) => {
    const stream = webSocketOverHttp2(req, socket as ServerResponse); // undefined unless HTTP/2
    if (stream === undefined) return answerConnect(req, socket);
    upgrades.set(req, stream);
    handle(req, socket as ServerResponse);
  });
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    // The upgrade gets a response of its own on the raw socket.
    const res = new ServerResponse(req);
    res.assignSocket(socket);
    res.shouldKeepAlive = false; // node's parser has let go of this socket: one answer, then it closes
    res.once('finish', () => socket.end());
    if (wantsWebSocket(req)) upgrades.set(req, { socket, head });
    handle(req, res);
  });
}

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
