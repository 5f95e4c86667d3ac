// `sluice start [--config FILE] [--demo-upstream]`: runs the gateway until
// SIGTERM or SIGINT, then drains in-flight requests and exits.
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { startSluice } from '../app.js';
import { configFileFrom, loadConfigOrReport } from './config-arg.js';
import type { Command } from './main.js';

export const command: Command = {
  summary: 'run the gateway (--config FILE, --demo-upstream)',
  async run(argv) {
    const args = parseArgs({ args: argv, options: { config: { type: 'string', short: 'c' }, 'demo-upstream': { type: 'boolean' } } }).values;
    const config = loadConfigOrReport(configFileFrom(args.config));
    if (!config) return 2;
    const logger = pino({ level: config.log.level, name: 'sluice' });
    // A bug must be logged, not take every tenant's traffic down with it.
    process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));

    const app = await startSluice(config, { logger, ruleStore: true, admin: true, demoUpstream: args['demo-upstream'] === true && !process.env.UPSTREAM_URL });
    if (app.adminUrl) logger.info({ url: app.adminUrl }, 'admin API listening');
    if (app.demoUpstreamUrl) logger.info({ url: app.demoUpstreamUrl }, 'demo upstream listening');
    return new Promise<number>((resolve) => {
      const stop = (signal: NodeJS.Signals) => {
        logger.info({ signal }, 'shutting down');
        process.once(signal, () => process.exit(1)); // a second signal: stop now
        app.close().then(
          () => resolve(0),
          (error: unknown) => {
            logger.error({ err: error }, 'shutdown failed');
            resolve(1);
          },
        );
      };
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });
  },
};
