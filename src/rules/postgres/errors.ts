// How PostgreSQL failures reach callers: always a SluiceError (503) naming the
// store, never a raw driver error, and never the password of the URL.
import { SluiceError } from '../../core/errors.js';
import { errorMessage } from '../logger.js';
import { StoreTimeoutError } from './timed.js';

/** host:port/database, without user or password. */
export function describeUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    return `postgresql ${url.hostname}:${url.port || 5432}${url.pathname}`;
  } catch {
    return 'postgresql (unparsable SLUICE_DATABASE_URL)';
  }
}

/** The SQLSTATE of migrations/003's trigger: the write reached COMMIT after its deadline. */
export const DEADLINE_PASSED = 'SL001';

/** A timeout, a late COMMIT or a connection failure as a 503; other errors unchanged. */
export function storeError(location: string, what: StoreCall, ms: number, error: unknown, connectTimeoutMs?: number): unknown {
  if (error instanceof StoreTimeoutError || (error as { code?: string }).code === DEADLINE_PASSED) return timedOut(location, what, ms);
  if (isConnectionError(error)) return unavailable(location, error, connectTimeoutMs);
  return error;
}

type StoreCall = 'read' | 'write' | 'health check';

/** Which settings bound each kind of call, for the operator reading the error. */
const SETTING: Record<StoreCall, string> = {
  read: 'database.statementTimeoutMs',
  write: 'database.statementTimeoutMs + database.maxClockSkewMs',
  'health check': 'database.healthTimeoutMs',
};

function timedOut(location: string, what: StoreCall, ms: number): SluiceError {
  const tail =
    what === 'write'
      ? '; the write can no longer commit, so it will not be applied after this answer (read it back to see the current value)'
      : '';
  return new SluiceError('ERR_STORE_UNAVAILABLE', `rule store ${location} did not answer the ${what} within ${ms} ms (${SETTING[what]})${tail}`);
}

/** pg's words for a connection not made within connectionTimeoutMillis (the client's, then the pool's). */
const CONNECT_TIMEOUT = /connection timeout|timeout exceeded when trying to connect/i;

export function unavailable(location: string, error: unknown, connectTimeoutMs?: number): SluiceError {
  if (error instanceof SluiceError) return error;
  if (connectTimeoutMs !== undefined && CONNECT_TIMEOUT.test(errorMessage(error))) {
    return new SluiceError('ERR_STORE_UNAVAILABLE', `rule store ${location} did not accept a connection within ${connectTimeoutMs} ms (database.connectTimeoutMs)`);
  }
  return new SluiceError('ERR_STORE_UNAVAILABLE', `rule store ${location} is unreachable: ${errorMessage(error)}`);
}

export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  // Node socket errors, and PostgreSQL's class 08 (connection) and 57P (shutdown).
  return /^E[A-Z]+$/.test(code) || code.startsWith('08') || code.startsWith('57P') || /terminat|timeout|Connection/i.test(errorMessage(error));
}
