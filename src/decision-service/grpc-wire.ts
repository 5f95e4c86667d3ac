// gRPC unary and server-streaming calls on node:http2 streams: a request's one
// length-prefixed message read (uncompressed, at most 4 MiB, as grpc-js's
// default), answers written as a message then grpc-status in the trailers, and
// errors as a trailers-only response carrying the status code and message.
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { status } from '@grpc/grpc-js';

export { status as GrpcStatus };
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
const CONTENT_TYPE = 'application/grpc+proto';

export class GrpcError extends Error {
  constructor(
    readonly code: status,
    message: string,
  ) {
    super(message);
  }
}

/** Whether the request speaks gRPC; otherwise answered 415 and closed, as grpc-js answers it. */
export function isGrpc(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): boolean {
  if (headers[':method'] === 'POST' && headers['content-type']?.startsWith('application/grpc')) return true;
  if (!stream.destroyed) stream.respond({ ':status': 415 }, { endStream: true });
  return false;
}

/** The request's message, once its stream ended; rejects with a GrpcError for a compressed, oversized or broken frame. */
export function readMessage(stream: ServerHttp2Stream, maxBytes = MAX_MESSAGE_BYTES): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes + 5) reject(new GrpcError(status.RESOURCE_EXHAUSTED, `message larger than ${maxBytes} bytes`));
      else chunks.push(chunk);
    });
    // `on`, not `once`: each is emitted once, and once() wraps its listener per call.
    stream.on('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      if (body.length < 5 || body.readUInt32BE(1) !== body.length - 5) reject(new GrpcError(status.INTERNAL, 'the request is not one length-prefixed message'));
      else if (body[0] !== 0) reject(new GrpcError(status.UNIMPLEMENTED, 'compressed messages are not accepted (grpc-accept-encoding: identity)'));
      else resolve(body.subarray(5));
    });
    stream.on('error', reject);
  });
}

/** A message in its frame: flag 0 (not compressed), its length (big-endian), the bytes. */
export function framed(message: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(5 + message.length);
  frame[0] = 0;
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

// The same headers and trailers on every answer: built once, not per call.
const HEADERS = Object.freeze({ ':status': 200, 'content-type': CONTENT_TYPE, 'grpc-accept-encoding': 'identity' });
const OK_TRAILERS = Object.freeze({ 'grpc-status': '0' });
const RESPOND_OPTIONS = Object.freeze({ waitForTrailers: true });

/** A function of its own rather than a closure per stream: `wantTrailers` is emitted once, on the stream. */
function sendOkTrailers(this: ServerHttp2Stream): void {
  this.sendTrailers(OK_TRAILERS);
}

/** Headers, then each message written as it comes: a unary answer is `respond` then `finish`. */
export function respond(stream: ServerHttp2Stream): void {
  if (stream.destroyed) return;
  stream.respond(HEADERS, RESPOND_OPTIONS);
  stream.on('wantTrailers', sendOkTrailers);
}

export function writeMessage(stream: ServerHttp2Stream, message: Uint8Array): void {
  if (!stream.destroyed) stream.write(framed(message));
}

/** The one message of a unary answer and grpc-status 0. */
export function answerUnary(stream: ServerHttp2Stream, message: Uint8Array): void {
  answerFrame(stream, framed(message));
}

/** A unary answer whose message is already framed. */
export function answerFrame(stream: ServerHttp2Stream, frame: Buffer): void {
  respond(stream);
  if (!stream.destroyed) stream.end(frame);
}

/** grpc-message's percent-encoding: every byte outside printable ASCII, and `%`, as %XX of its UTF-8. */
const percentEncoded = (details: string): string => details.replace(/[^\x20-\x24\x26-\x7e]/gu, (char) => encodeURIComponent(char));

/** A trailers-only answer: the status and its message (percent-encoded, as gRPC's grpc-message is). */
export function fail(stream: ServerHttp2Stream, code: status, details: string): void {
  if (stream.destroyed) return;
  // After the headers (a stream cut short) only a reset is left to say it.
  if (stream.headersSent) return void stream.close();
  stream.respond({ ':status': 200, 'content-type': CONTENT_TYPE, 'grpc-status': String(code), 'grpc-message': percentEncoded(details) }, { endStream: true });
}
