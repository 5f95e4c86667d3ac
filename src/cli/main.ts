#!/usr/bin/env node
// The `sluice` command. Each subcommand lives in its own file and is loaded
// only when asked for; add one by adding a line to COMMANDS.
import { isSluiceError } from '../core/errors.js';
import { describeFailure } from './cli-io.js';
import { missingPackageMessage } from './gateway-packages.js';
import type { Command } from './command.js';

export type { Command } from './command.js';

const COMMANDS: Record<string, () => Promise<Command>> = {
  start: async () => (await import('./start.js')).command,
  check: async () => (await import('./check.js')).command,
  explain: async () => (await import('./explain-command.js')).command,
  migrate: async () => ({ summary: 'apply the rule store migrations to SLUICE_DATABASE_URL', run: (await import('./migrate.js')).run }),
  rules: async () => ({ summary: 'list|get|set|delete|import|export rules through the admin API', run: (await import('./rules-command.js')).run }),
  overrides: async () => ({ summary: 'list|set|delete per-key overrides of limits through the admin API', run: (await import('./overrides-command.js')).run }),
  plans: async () => ({ summary: 'list|show|create|set-limit|delete|assign|unassign plans through the admin API', run: (await import('./plans-command.js')).run }),
  reload: async () => ({ summary: "re-read the running gateway's config file (like SIGHUP) through the admin API", run: (await import('./reload-command.js')).run }),
  ratelimit: async () => (await import('./ratelimit-command.js')).command,
  keys: async () => ({ summary: 'create|list|revoke API keys through the admin API', run: (await import('./keys-command.js')).run }),
  tokens: async () => ({ summary: 'create|list|revoke named admin tokens (read, write, admin) through the admin API', run: (await import('./tokens-command.js')).run }),
  audit: async () => ({ summary: 'export the audit log of every change (--since, --format json|csv) through the admin API', run: (await import('./audit-command.js')).run }),
};

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
