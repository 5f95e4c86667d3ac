// What every operator command shares: its output streams and environment,
// argument parsing, and the exit codes (0 done, 1 a failed call, 2 bad usage).
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
