// `sluice check --config FILE`: validates the config without serving anything,
// through the very loadConfig `sluice start` runs, so a file check passes is
// one start takes (the engine is built from it without validating again).
import { parseArgs } from 'node:util';
import type { Command } from './main.js';
import { configFileFrom, loadConfigOrReport } from './config-arg.js';

export const command: Command = {
  summary: 'validate a config file (--config FILE) without starting',
  async run(argv) {
    const args = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' } } }).values;
    const file = configFileFrom(args.config);
    const config = loadConfigOrReport(file);
    if (!config) return 2;
    for (const warning of config.decisionService.warnings) process.stderr.write(`warning: ${warning}\n`);
    process.stdout.write(
      `${file}: ok (${config.routes.length} routes, ${config.rules.length} rules, ${config.tenants.keys.length} keys, store ${config.store.type})\n`,
    );
    return 0;
  },
};
