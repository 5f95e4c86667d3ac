// The admin API as the operator CLI calls it: `--admin URL` (default
// http://127.0.0.1:8081) and the token from SLUICE_ADMIN_TOKEN. Errors come
// back as the API's messages, with the API's code.
import { isCatalogued } from '../core/error-codes.js';
import { SluiceError } from '../core/errors.js';
import { CliError, type CliIo } from './cli-io.js';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8081';

export class AdminClient {
  constructor(
    private readonly baseUrl: string,
    private readonly token: string | undefined,
  ) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    if (!this.token) throw new SluiceError('ERR_UNAUTHORIZED', 'SLUICE_ADMIN_TOKEN is not set: export the admin token the gateway was started with');
    let res: Response;
    try {
      res = await fetch(new URL(path, this.baseUrl), {
        method,
        headers: { authorization: `Bearer ${this.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (error) {
      throw new CliError('ERR_ADMIN_UNREACHABLE', `cannot reach the admin API at ${this.baseUrl}: ${(error as Error).cause ?? (error as Error).message} (set --admin URL)`);
    }
    const text = await res.text();
    const data = text ? (JSON.parse(text) as unknown) : undefined;
    if (!res.ok) {
      const error = (data as { error?: { code?: string; message?: string; field?: string } } | undefined)?.error;
      const where = error?.field ? `${error.field}: ` : '';
      const message = `${res.status} ${where}${error?.message ?? res.statusText}`;
      throw isCatalogued(error?.code) ? new CliError(error.code, message) : new Error(message);
    }
    return data as T;
  }
}

export function clientFrom(options: Map<string, string | true>, io: CliIo): AdminClient {
  const url = options.get('admin');
  return new AdminClient(typeof url === 'string' ? url : (io.env.SLUICE_ADMIN_URL ?? DEFAULT_ADMIN_URL), io.env.SLUICE_ADMIN_TOKEN);
}

