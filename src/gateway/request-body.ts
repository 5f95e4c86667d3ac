// Like nginx's proxy_request_buffering: a small body is read whole before an
// upstream connection is taken, so a client that stalls mid-body holds only
// its own socket. A larger body streams, cut when the client goes quiet.
import type { IncomingMessage } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { BodyTooLargeError } from './body-limit.js';
import type { GatewayErrorName } from '../http/errors.js';

/** Internal: the client is answered with the code it carries. */
export class BodyIdleError extends Error {
  readonly code: GatewayErrorName = 'request_timeout';
  constructor(readonly idleMs: number) {
    super(`request body idle for ${idleMs} ms`);
  }
}

export interface BodyLimits {
  bufferBytes: number;
  maxBytes: number;
  idleMs: number;
}

/** What to send upstream: no body, the whole body, or `req` itself to stream (anything read so far is put back). */
export type ReadBody = { kind: 'none' } | { kind: 'whole'; body: Buffer } | { kind: 'stream' } | { kind: 'failed'; reason: 'request_timeout' | 'aborted' };

export function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** Reads up to `limits.bufferBytes` of the body; a declared larger length streams without waiting. */
export function readBody(req: IncomingMessage, limits: BodyLimits): Promise<ReadBody> {
  if (!hasBody(req)) return Promise.resolve({ kind: 'none' });
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limits.bufferBytes) return Promise.resolve({ kind: 'stream' });
  if (req.readableEnded) return Promise.resolve({ kind: 'whole', body: Buffer.alloc(0) });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: ReadBody) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onGone).off('close', onGone);
      resolve(result);
    };
    const timer = setTimeout(() => finish({ kind: 'failed', reason: 'request_timeout' }), limits.idleMs);
    const onData = (chunk: Buffer) => {
      timer.refresh();
      chunks.push(chunk);
      size += chunk.length;
      if (size <= limits.bufferBytes) return;
      // Too big to hold: hand what we have back to the stream and let it flow upstream.
      req.pause();
      finish({ kind: 'stream' });
      req.unshift(Buffer.concat(chunks, size));
    };
    const onEnd = () => finish({ kind: 'whole', body: Buffer.concat(chunks, size) });
    const onGone = () => finish({ kind: 'failed', reason: 'aborted' });
    req.on('data', onData).once('end', onEnd).once('error', onGone).once('close', onGone);
  });
}

/** Passes a streamed body through, counting it against `maxBytes` and failing after `idleMs` of silence. */
export class BodyGuard extends Transform {
  private seen = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly maxBytes: number,
    idleMs: number,
  ) {
    super();
    this.timer = setTimeout(() => this.destroy(new BodyIdleError(idleMs)), idleMs);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.timer.refresh();
    this.seen += chunk.length;
    if (this.seen > this.maxBytes) callback(new BodyTooLargeError(this.maxBytes));
    else callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    clearTimeout(this.timer);
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    clearTimeout(this.timer);
    callback(error);
  }
}
