#!/usr/bin/env node
// The `sluice` command. Each subcommand lives in its own file and is loaded
// only when asked for; add one by adding a line to COMMANDS (commands.ts).
import { isSluiceError } from '../core/errors.js';
import { describeFailure } from './cli-io.js';
import { missingPackageMessage } from './gateway-packages.js';
import { COMMANDS } from './commands.js';

export type { Command } from './command.js';

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const load = name === undefined ? undefined : COMMANDS[name];
  if (!load) {
    const lines = await Promise.all(Object.entries(COMMANDS).map(async ([key, get]) => `  ${key.padEnd(10)} ${(await get()).summary}`));
    const stream = name === undefined || name === 'help' || name === '--help' ? process.stdout : process.stderr;
    if (name !== undefined && name !== 'help' && name !== '--help') stream.write(`sluice: unknown command ${JSON.stringify(name)}\n`);
    stream.write(`usage: sluice <command> [options]\n\ncommands:\n${lines.join('\n')}\n`);
    return stream === process.stdout ? 0 : 2;
  }
  return (await load()).run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`sluice: ${missingPackageMessage(error) ?? describeFailure(error)}\n`);
    // A config-class error found past the file's validation (e.g. a data dir another process holds) exits as a bad file does.
    process.exitCode = isSluiceError(error) && error.code === 'ERR_CONFIG_INVALID' ? 2 : 1;
  },
);
