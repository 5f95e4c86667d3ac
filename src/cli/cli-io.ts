// What every operator command shares: its output streams and environment,
// argument parsing, and the exit codes (0 done, 1 a failed call, 2 bad usage).
// A failure is printed with its code from the catalogue (docs/errors.md).
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CLI_ERRORS, type CliErrorCode, type ErrorCode, isCatalogued } from '../core/error-codes.js';

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

/**
 * `--name value` / `--name=value` / `--flag` options and the positional rest,
 * for the commands that call the admin API: any option is taken and each
 * command reads the ones it knows (a rule's fields are options: `--capacity
 * 200`). The commands with a fixed set of options (`start`, `check`,
 * `explain`) declare it to parseDeclaredArgs, below, which refuses any other.
 */
export function parseCommandArgs(argv: string[]): { positional: string[]; options: Map<string, string | true> } {
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

type DeclaredOptions = NonNullable<ParseArgsConfig['options']>;
export type DeclaredValues<T extends DeclaredOptions> = ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true }>>['values'];

/**
 * Declared options through node:util's parseArgs, with two differences a user
 * meets: a string option takes the next argument whatever it starts with (a
 * generated token or key may start with `-`, which parseArgs would call
 * ambiguous), and a mistake is a UsageError naming the option.
 */
export function parseDeclaredArgs<T extends DeclaredOptions>(argv: string[], options: T): DeclaredValues<T> {
  const takesValue = (arg: string): string | undefined => {
    const name = arg.startsWith('--') ? arg.slice(2) : Object.keys(options).find((key) => arg === `-${options[key]!.short}`);
    return name !== undefined && options[name]?.type === 'string' ? name : undefined;
  };
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = takesValue(argv[i]!);
    if (name !== undefined && i + 1 < argv.length && argv[i + 1]!.startsWith('-')) joined.push(`--${name}=${argv[++i]!}`);
    else joined.push(argv[i]!);
  }
  try {
    const { values, positionals } = parseArgs({ args: joined, options, allowPositionals: true });
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
    return values;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    // node names the option: "Unknown option '--pth'", "Option '--path <value>' argument missing"
    throw new UsageError((error as Error).message.split('. ')[0]!);
  }
}

/** parseDeclaredArgs for a command that reports its own errors: the options, or undefined once a mistake in them was said on stderr (the command exits 2). */
export function argsOrReport<T extends DeclaredOptions>(argv: string[], options: T, command: string, io: Pick<CliIo, 'err'> = processIo): DeclaredValues<T> | undefined {
  try {
    return parseDeclaredArgs(argv, options);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`sluice ${command}: ${error.message}\n`);
    return undefined;
  }
}

/** Runs a CLI body: 0 on success, 1 on a failed call, 2 on a usage error. */
export async function runCli(io: CliIo, usage: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message}\n\n${usage}`);
      return CLI_ERRORS.ERR_USAGE.exit;
    }
    io.err(`error: ${describeFailure(error)}\n`);
    return 1;
  }
}

/** The message, and the error's code when a user can look it up: `wrong token (ERR_UNAUTHORIZED)`. */
export function describeFailure(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  return isCatalogued(code) ? `${message} (${code})` : message;
}

/** A failure of the CLI itself, or of a call it made, with its catalogued code. */
export class CliError extends Error {
  constructor(
    readonly code: CliErrorCode | ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super('ERR_USAGE', message);
  }
}
