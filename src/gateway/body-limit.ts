// A streamed request body without Content-Length is counted as it passes and
// cut off past the limit; a declared length is checked before anything is read.
import { Transform, type TransformCallback } from 'node:stream';

export class BodyTooLargeError extends Error {
  readonly code = 'SLUICE_BODY_TOO_LARGE';
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

export class BodyLimit extends Transform {
  private seen = 0;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) callback(new BodyTooLargeError(this.limit));
    else callback(null, chunk);
  }
}
