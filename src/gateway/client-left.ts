// Whether the client can still get an answer. An HTTP/1.1 response is
// `destroyed` once its socket closes; an HTTP/2 compatibility response has no
// such property, so a stream the client reset (RST_STREAM) or that closed
// otherwise is read from the stream itself.
import type { ServerResponse } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';

/** True once nothing written to `res` can reach the client: its socket closed, or its HTTP/2 stream was reset or closed. */
export function clientLeft(res: ServerResponse): boolean {
  if (res.destroyed) return true;
  const stream = (res as unknown as { stream?: ServerHttp2Stream }).stream;
  return stream !== undefined && (stream.closed || stream.destroyed);
}
