// `sluice check --config FILE [--connect]`: validates the config without
// serving anything, through the very loadConfig `sluice start` runs, so a file
// check passes is one start takes (the engine is built from it without
// validating again). With --connect it also connects to the Redis and the
// PostgreSQL the file names (check-connect.ts): exit 1 when one fails.
import type { Command } from './command.js';
import { checkConnections } from './check-connect.js';
import { configFileFrom, loadConfigOrReport } from './config-arg.js';
import { argsOrReport } from './cli-io.js';

const CONNECT_TIMEOUT_MS = 5000;

export const command: Command = {
  summary: 'validate a config file (--config FILE) without starting; --connect also tests its Redis and PostgreSQL connections',
  async run(argv) {
    const args = argsOrReport(argv, { config: { type: 'string', short: 'c' }, connect: { type: 'boolean' } } as const, 'check');
    if (args === undefined) return 2;
    const file = configFileFrom(args.config);
    const config = loadConfigOrReport(file);
    if (!config) return 2;
    for (const warning of config.decisionService.warnings) process.stderr.write(`warning: ${warning}\n`);
    process.stdout.write(
      `${file}: ok (${config.routes.length} routes, ${config.rules.length} rules, ${config.tenants.keys.length} keys, store ${config.store.type})\n`,
    );
    if (!args.connect) return 0;
    const checks = await checkConnections(config, CONNECT_TIMEOUT_MS);
    if (checks.length === 0) process.stdout.write('no connection to check: the memory store and the embedded rule store\n');
    for (const { target, problem } of checks) {
      if (problem === undefined) process.stdout.write(`${target}: ok\n`);
      else process.stderr.write(`${target}: ${problem}\n`);
    }
    return checks.every((check) => check.problem === undefined) ? 0 : 1;
  },
};
