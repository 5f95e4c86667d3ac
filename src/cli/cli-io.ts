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

type DeclaredOptions = NonNullable<ParseArgsConfig['options']>;
export type DeclaredValues<T extends DeclaredOptions> = ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true }>>['values'];

/** Marks a positional argument set aside (no argument the shell passes holds a NUL). */
const PLACEHOLDER = '\0positional:';

/**
 * The one argument parser of every command: the options it declares, through
 * node:util's parseArgs, and the positional rest. Two differences a user
 * meets: a string option takes the next argument whatever it starts with (a
 * generated token or key may start with `-`, which parseArgs would call
 * ambiguous), and a mistake (an option the command does not declare, a value
 * missing) is a UsageError naming the option, so a misspelt option never
 * passes unseen.
 */
export function parseCommandLine<T extends DeclaredOptions>(argv: string[], options: T): { values: DeclaredValues<T>; positional: string[] } {
  const takesValue = (arg: string): string | undefined => {
    const name = arg.startsWith('--') ? arg.slice(2) : Object.keys(options).find((key) => arg === `-${options[key]!.short}`);
    return name !== undefined && options[name]?.type === 'string' ? name : undefined;
  };
  const isShort = (arg: string): boolean => Object.values(options).some((option) => option.short !== undefined && arg === `-${option.short}`);
  const joined: string[] = [];
  // An argument with one dash that is no declared short option is a positional one (an id may start with `-`): it
  // goes through parseArgs as a placeholder, put back after.
  const dashed: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const name = takesValue(arg);
    if (name !== undefined && i + 1 < argv.length && argv[i + 1]!.startsWith('-')) joined.push(`--${name}=${argv[++i]!}`);
    else if (arg.length > 1 && arg.startsWith('-') && !arg.startsWith('--') && !isShort(arg)) joined.push(`${PLACEHOLDER}${dashed.push(arg) - 1}`);
    else joined.push(arg);
  }
  try {
    const { values, positionals } = parseArgs({ args: joined, options, allowPositionals: true });
    return { values, positional: positionals.map((arg) => (arg.startsWith(PLACEHOLDER) ? dashed[Number(arg.slice(PLACEHOLDER.length))]! : arg)) };
  } catch (error) {
    // node names the option: "Unknown option '--pth'", "Option '--path <value>' argument missing"
    throw new UsageError((error as Error).message.split('. ')[0]!);
  }
}

/** The declared options of a command that takes no positional argument (`start`, `check`, `explain`). */
export function parseDeclaredArgs<T extends DeclaredOptions>(argv: string[], options: T): DeclaredValues<T> {
  const { values, positional } = parseCommandLine(argv, options);
  if (positional.length > 0) throw new UsageError(`unexpected argument ${positional[0]}`);
  return values;
}

/** An admin command's options as given: a string's value, or `true` for a flag; what was not given is absent. */
export type GivenOptions = Map<string, string | true>;

/** The same for the admin commands: their positional arguments, and the options given as a map (parseCommandLine). */
export function parseCommandArgs(argv: string[], options: DeclaredOptions): { positional: string[]; options: GivenOptions } {
  const { values, positional } = parseCommandLine(argv, options);
  const given: GivenOptions = new Map();
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string') given.set(name, value);
    else if (value === true) given.set(name, true);
  }
  return { positional, options: given };
}

/** The option every admin command takes: the admin API's URL (the token comes from SLUICE_ADMIN_TOKEN). */
export const ADMIN_OPTIONS = { admin: { type: 'string' } } as const satisfies DeclaredOptions;

/** `--json`, for the commands that can print JSON. */
export const JSON_OPTION = { json: { type: 'boolean' } } as const satisfies DeclaredOptions;

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
