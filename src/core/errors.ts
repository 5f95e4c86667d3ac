// The error catalogue: every error Sluice raises on purpose carries a stable code,
// the field it is about (when there is one) and, for the admin API, an HTTP status.

export type ErrorCode =
  | 'ERR_RULE_INVALID'
  | 'ERR_ID_INVALID'
  | 'ERR_COST_INVALID'
  | 'ERR_CONFIG_INVALID'
  | 'ERR_STORE_UNAVAILABLE'
  | 'ERR_SCRIPT'
  | 'ERR_NOT_FOUND'
  | 'ERR_UNAUTHORIZED'
  | 'ERR_BAD_REQUEST';

const STATUS: Record<ErrorCode, number> = {
  ERR_RULE_INVALID: 400,
  ERR_ID_INVALID: 400,
  ERR_COST_INVALID: 400,
  ERR_CONFIG_INVALID: 400,
  ERR_STORE_UNAVAILABLE: 503,
  ERR_SCRIPT: 500,
  ERR_NOT_FOUND: 404,
  ERR_UNAUTHORIZED: 401,
  ERR_BAD_REQUEST: 400,
};

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
    this.status = STATUS[code];
  }
}

export function isSluiceError(error: unknown): error is SluiceError {
  return error instanceof SluiceError;
}
