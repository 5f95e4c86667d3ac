// A declared Content-Length is checked before anything is read; a streamed body
// is counted as it passes (BodyGuard in request-body.ts) and cut past the limit.
export class BodyTooLargeError extends Error {
  readonly code = 'SLUICE_BODY_TOO_LARGE';
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}
