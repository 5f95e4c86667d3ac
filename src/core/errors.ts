// The error every deliberate failure of Sluice raises: a stable code from the
// catalogue (error-codes.ts, listed in docs/errors.md), the field it is about
// (when there is one) and the HTTP status the admin API answers it with.
import { type ErrorCode, SLUICE_ERRORS } from './error-codes.js';

export type { ErrorCode } from './error-codes.js';

export class SluiceError extends Error {
  readonly code: ErrorCode;
  /** Dotted path of the offending field, e.g. `rules[2].capacity`. */
  readonly field: string | undefined;
  readonly status: number;

  constructor(code: ErrorCode, message: string, field?: string) {
    super(field ? `${field}: ${message}` : message);
    this.name = 'SluiceError';
    this.code = code;
    this.field = field;
    this.status = SLUICE_ERRORS[code].status;
  }
}

export function isSluiceError(error: unknown): error is SluiceError {
  return error instanceof SluiceError;
}
