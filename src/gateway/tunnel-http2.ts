// WebSocket over HTTP/2 (RFC 8441): the client opens a stream with an extended
// CONNECT (`:protocol: websocket`) and, answered 200, sends its frames as the
// stream's DATA. Upstreams speak WebSocket over HTTP/1.1, so the gateway makes
// that handshake itself (a Sec-WebSocket-Key of its own, the Accept checked)
// and then joins the stream to the upstream socket; the frames cross untouched
// (RFC 8441 keeps the WebSocket framing, masking included).
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, Http2ServerRequest, type ServerHttp2Stream } from 'node:http2';
import type { Socket } from 'node:net';

const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** An admitted RFC 8441 stream waiting for its tunnel. */
export interface Http2Upgrade {
  stream: ServerHttp2Stream;
  /** The Sec-WebSocket-Key the gateway sends upstream in the client's stead. */
  key: string;
}

/** An open tunnel, for the drain. */
export interface OpenHttp2Tunnel {
  end(): void;
}

/**
 * The upgrade for an extended CONNECT asking for WebSocket, or undefined for any
 * other CONNECT (those stay 501). The request then counts as the GET it stands
 * for: routes and limits see the same method as an HTTP/1.1 upgrade.
 */
export function webSocketOverHttp2(req: IncomingMessage, res: ServerResponse): Http2Upgrade | undefined {
  if (!(req instanceof Http2ServerRequest)) return undefined;
  const protocol = req.headers[':protocol'];
  if (typeof protocol !== 'string' || protocol.toLowerCase() !== 'websocket') return undefined;
  req.method = 'GET';
  return { stream: (res as unknown as { stream: ServerHttp2Stream }).stream, key: randomBytes(16).toString('base64') };
}

/** `flat` (name, value, …) without any header called `name`: one the gateway sets itself. */
export function withoutHeader(flat: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < flat.length; i += 2) if (flat[i]!.toLowerCase() !== name) out.push(flat[i]!, flat[i + 1]!);
  return out;
}

/** Whether the upstream's 101 proves it read our key (RFC 6455 §4.2.2). */
export function acceptMatches(key: string, answer: IncomingMessage): boolean {
  return answer.headers['sec-websocket-accept'] === createHash('sha1').update(key + ACCEPT_GUID).digest('base64');
}

/**
 * Answers the stream 200 with `headers` and joins it to the upstream socket.
 * Either side ending ends the other; a reset stream or a broken socket ends
 * both; `limits.websocketIdleTimeoutMs` with no byte either way (the socket's
 * timer sees both directions) closes it. The stream is always closed with
 * NO_ERROR after what was in flight is written: a clean end for the client.
 */
export function joinHttp2(
  res: ServerResponse,
  stream: ServerHttp2Stream,
  upstream: { readonly socket: Socket; readonly head: Buffer },
  tunnel: { readonly headers: string[]; readonly idleMs: number; readonly onClose: () => void },
): OpenHttp2Tunnel {
  const { socket: upSocket, head: upHead } = upstream;
  const { headers, idleMs, onClose } = tunnel;
  res.writeHead(200, headers);
  if (upHead.length > 0) stream.write(upHead);
  upSocket.setNoDelay(true);
  upSocket.setTimeout(idleMs, () => upSocket.destroy());
  const closeStream = () => {
    if (!stream.closed && !stream.destroyed) stream.close(constants.NGHTTP2_NO_ERROR);
  };
  let closed = false;
  const close = () => {
    if (closed) return;
    closed = true;
    closeStream();
    upSocket.end(); // the upstream gets a FIN; a broken socket is already gone
    onClose();
  };
  stream.pipe(upSocket);
  upSocket.pipe(stream);
  upSocket.once('close', close);
  upSocket.once('error', () => upSocket.destroy());
  stream.once('close', close);
  stream.once('error', () => upSocket.destroy());
  return { end: closeStream };
}
