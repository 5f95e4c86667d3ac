// The admin API from the operator CLI: `--admin URL` (default http://127.0.0.1:8081)
// and the token from SLUICE_ADMIN_TOKEN. Errors come back as the API's messages.
import { SluiceError } from '../core/errors.js';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8081';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

export const processIo: CliIo = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
};

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
      throw new SluiceError('ERR_STORE_UNAVAILABLE', `cannot reach the admin API at ${this.baseUrl}: ${(error as Error).cause ?? (error as Error).message} (set --admin URL)`);
    }
    const text = await res.text();
    const data = text ? (JSON.parse(text) as unknown) : undefined;
    if (!res.ok) {
      const error = (data as { error?: { message?: string; field?: string } } | undefined)?.error;
      const where = error?.field ? `${error.field}: ` : '';
      throw new Error(`${res.status} ${where}${error?.message ?? res.statusText}`);
    }
    return data as T;
  }
}

/** `--name value` / `--name=value` / `--flag` options and the positional rest. */
export function parseArgs(argv: string[]): { positional: string[]; options: Map<string, string | true> } {
  const positional: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || arg === '--') {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    if (eq > 0) options.set(arg.slice(2, eq), arg.slice(eq + 1));
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) options.set(arg.slice(2), argv[++i]!);
    else options.set(arg.slice(2), true);
  }
  return { positional, options };
}

export function clientFrom(options: Map<string, string | true>, io: CliIo): AdminClient {
  const url = options.get('admin');
  return new AdminClient(typeof url === 'string' ? url : (io.env.SLUICE_ADMIN_URL ?? DEFAULT_ADMIN_URL), io.env.SLUICE_ADMIN_TOKEN);
}

/** Runs a CLI body: 0 on success, 1 on a failed call, 2 on a usage error. */
export async function runCli(io: CliIo, usage: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${usage}`);
      return 2;
    }
    io.err(`error: ${(error as Error).message}\n`);
    return 1;
  }
}

export class UsageError extends Error {}
