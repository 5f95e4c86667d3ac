// A declared Content-Length is checked before anything is read; a streamed body
// is counted as it passes (BodyGuard in request-body.ts) and cut past the limit.
import type { GatewayErrorName } from '../http/errors.js';

/** Internal: the client is answered with the code it carries. */
export class BodyTooLargeError extends Error {
  readonly code: GatewayErrorName = 'body_too_large';
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}
