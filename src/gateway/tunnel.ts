// WebSocket upgrades through the gateway. The upgrade request goes through the
// same path as any request (route, key, limits: refused → 429 before any
// upstream connection); once admitted it is sent to one of the route's
// instances, and when that instance answers 101 the two sockets are joined and
// carry the frames both ways untouched, until either side closes, the tunnel
// stays idle past its timeout, or the gateway drains. An instance that answers
// anything else has its answer relayed as is. Over HTTP/2 (RFC 8441) the
// client's stream takes the socket's place (tunnel-http2.ts).
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import { Gauge, Counter } from 'prom-client';
import { resilienceRegistry } from '../metrics/registry.js';
import { clientLeft } from './client-left.js';
import { sendError } from '../http/errors.js';
import type { ForwardContext, ForwardTarget } from './proxy.js';
import { acceptMatches, type Http2Upgrade, joinHttp2, withoutHeader } from './tunnel-http2.js';

const openTunnels = new Gauge({ name: 'sluice_websocket_tunnels_open', help: 'WebSocket tunnels open now, per route', labelNames: ['route'] as const, registers: [resilienceRegistry] });
const tunnels = new Counter({
  name: 'sluice_websocket_tunnels_total',
  help: 'WebSocket upgrades admitted by the limits, per route, by outcome (opened; refused_by_upstream: it answered without 101; unreachable)',
  labelNames: ['route', 'outcome'] as const,
  registers: [resilienceRegistry],
});

/** The raw client socket and the bytes that came after the upgrade request's headers; or an HTTP/2 stream. */
export type Upgrade = { socket: Socket; head: Buffer } | Http2Upgrade;

/** An admitted upgrade on its way upstream: where it goes, the limits' headers for the client, the request's context. */
export interface AdmittedUpgrade {
  readonly upgrade: Upgrade;
  readonly target: ForwardTarget;
  readonly limitHeaders: string[];
  readonly context: ForwardContext;
}

/** The upstream's 101: its answer, its socket and the bytes it sent after its headers. */
interface Upstream101 {
  readonly answer: IncomingMessage;
  readonly socket: Socket;
  readonly head: Buffer;
}

export class Tunnels {
  private readonly open = new Set<{ end(): void }>();

  constructor(private readonly idleMs: () => number) {}

  get size(): number {
    return this.open.size;
  }

  /** Sends the admitted upgrade upstream and joins the sockets on a 101. */
  open101(req: IncomingMessage, res: ServerResponse, admitted: AdmittedUpgrade): void {
    const { upgrade, target, limitHeaders, context } = admitted;
    const path = target.plan.path(req.url ?? '/');
    if (path === undefined) {
      sendError(res, 'invalid_path', limitHeaders, true);
      return;
    }
    const instance = target.balancer.pick();
    const url = new URL(path, instance.url);
    // Over HTTP/2 the handshake upstream is the gateway's own: its key, never one the client sent.
    const headers = 'key' in upgrade ? [...withoutHeader(target.plan.requestHeaders(req, context), 'sec-websocket-key'), 'sec-websocket-key', upgrade.key] : target.plan.requestHeaders(req, context);
    context.propagate?.(headers);
    headers.push('connection', 'Upgrade', 'upgrade', req.headers.upgrade ?? 'websocket');
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    // A connection of its own (agent: false), closed after an answer that is no 101: an upstream that
    // ignored the Upgrade must never read a later request on it (the gateway refuses an upgrade with a body).
    const upstream: ClientRequest = send(url, { method: req.method, headers: pairs(headers), timeout: target.timeoutMs, agent: false });
    upstream.once('upgrade', (answer, socket, head) => {
      const up: Upstream101 = { answer, socket, head };
      if ('key' in upgrade) this.joinHttp2(res, upgrade, up, [...target.plan.responseHeaders(answer.rawHeaders), ...limitHeaders], context.route);
      else this.join(upgrade, up, limitHeaders, context.route);
    });
    upstream.once('response', (answer) => {
      tunnels.labels(context.route, 'refused_by_upstream').inc();
      res.writeHead(answer.statusCode ?? 502, [...target.plan.responseHeaders(answer.rawHeaders), ...limitHeaders]);
      answer.pipe(res);
    });
    upstream.once('timeout', () => upstream.destroy(new Error('upstream timeout')));
    upstream.once('error', () => {
      tunnels.labels(context.route, 'unreachable').inc();
      target.balancer.failed(instance);
      sendError(res, 'upstream_unreachable', limitHeaders, true);
    });
    upstream.end();
  }

  /** Ends every tunnel (the drain): each side gets a FIN once what was in flight is written. */
  closeAll(): void {
    for (const socket of this.open) socket.end();
  }

  /** RFC 8441: the 200 carries the 101's headers (its Accept answered our key, not the client's) and the limits'. */
  private joinHttp2(res: ServerResponse, upgrade: Http2Upgrade, up: Upstream101, headers: string[], route: string): void {
    const { answer, socket: upSocket } = up;
    // clientLeft, not res.destroyed: an HTTP/2 response has no such property, so a stream reset while the
    // upstream answered would be joined and the upstream socket held until the idle timeout.
    if (clientLeft(res) || !acceptMatches(upgrade.key, answer)) {
      upSocket.destroy(); // the client left while the upstream answered, or the upstream did not read our key
      sendError(res, 'upstream_unreachable', undefined, true);
      return;
    }
    tunnels.labels(route, 'opened').inc();
    openTunnels.labels(route).inc();
    const tunnel = joinHttp2(res, upgrade.stream, up, {
      headers: withoutHeader(headers, 'sec-websocket-accept'),
      idleMs: this.idleMs(),
      onClose: () => {
        this.open.delete(tunnel);
        openTunnels.labels(route).dec();
      },
    });
    this.open.add(tunnel);
  }

  private join(upgrade: { socket: Socket; head: Buffer }, up: Upstream101, limitHeaders: string[], route: string): void {
    const { socket, head } = upgrade;
    const { answer, socket: upSocket, head: upHead } = up;
    const lines = [`HTTP/1.1 101 ${answer.statusMessage || 'Switching Protocols'}`];
    for (let i = 0; i < answer.rawHeaders.length; i += 2) lines.push(`${answer.rawHeaders[i]}: ${answer.rawHeaders[i + 1]}`);
    for (let i = 0; i < limitHeaders.length; i += 2) lines.push(`${limitHeaders[i]}: ${limitHeaders[i + 1]}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (upHead.length > 0) socket.write(upHead);
    if (head.length > 0) upSocket.write(head);
    tunnels.labels(route, 'opened').inc();
    openTunnels.labels(route).inc();
    this.open.add(socket);
    const idleMs = this.idleMs();
    for (const side of [socket, upSocket]) {
      side.setTimeout(idleMs, () => side.destroy());
      side.setNoDelay(true);
    }
    socket.pipe(upSocket);
    upSocket.pipe(socket);
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      this.open.delete(socket);
      openTunnels.labels(route).dec();
      socket.destroy();
      upSocket.destroy();
    };
    for (const side of [socket, upSocket]) {
      side.once('close', close);
      side.once('error', close);
      side.once('end', () => (side === socket ? upSocket : socket).end());
    }
  }
}

/** A flat header list as node's client takes it (an object; repeated names joined). */
function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) {
    const name = flat[i]!.toLowerCase();
    out[name] = out[name] === undefined ? flat[i + 1]! : `${out[name]}, ${flat[i + 1]}`;
  }
  return out;
}
