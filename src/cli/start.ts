// `sluice start [--config FILE] [--workers N|auto] [--log-format pretty|json] [--demo-upstream]`: runs the
// gateway until SIGTERM or SIGINT, then drains in-flight requests and exits.
// SIGHUP reloads the config file. With workers > 1 this process becomes the
// primary (src/process/primary.ts) and each worker re-enters here.
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { type RunningSluice, startSluice } from '../app.js';
import type { Env } from '../config/env.js';
import { createLogger } from '../config/logger.js';
import { LOG_FORMATS } from '../config/schema.js';
import type { SluiceConfig } from '../config/types.js';
import { startDemoUpstream } from '../demo/upstream.js';
import { ConfigReloader } from '../admin/config-reload.js';
import { untilStopped } from '../process/stop.js';
import { argsOrReport } from './cli-io.js';
import { configFileFrom, loadConfigOrReport } from './config-arg.js';
import type { Command } from './command.js';

const START_OPTIONS = { config: { type: 'string', short: 'c' }, workers: { type: 'string', short: 'w' }, 'log-format': { type: 'string' }, 'demo-upstream': { type: 'boolean' } } as const;

export const command: Command = {
  summary: 'run the gateway (--config FILE, --workers N|auto, --log-format pretty|json, --demo-upstream); SIGHUP reloads the config',
  async run(argv) {
    if (cluster.isWorker) return (await import('../process/worker.js')).runWorker();
    const args = argsOrReport(argv, START_OPTIONS, 'start');
    if (args === undefined) return 2;
    const format = args['log-format'];
    if (format !== undefined && !(LOG_FORMATS as readonly string[]).includes(format)) {
      process.stderr.write(`sluice: --log-format must be ${LOG_FORMATS.join(' or ')}, not ${JSON.stringify(format)}\n`);
      return 2;
    }
    const file = configFileFrom(args.config);
    // The flags travel as the variables they stand for, so workers (and reloads) see the same config.
    const env: Env = { ...process.env, ...(args.workers === undefined ? {} : { SLUICE_WORKERS: args.workers }), ...(format === undefined ? {} : { SLUICE_LOG_FORMAT: format }) };
    const config = loadConfigOrReport(file, env);
    if (!config) return 2;
    const logger = createLogger(config.log);
    // A bug must be logged, not take every tenant's traffic down with it.
    process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
    const demoUpstream = args['demo-upstream'] === true && !process.env.UPSTREAM_URL;
    if (config.workers > 1) return runWorkers(config, file, env, logger, demoUpstream);
    return runSingle(config, file, env, logger, demoUpstream);
  },
};

/** One process: gateway, admin API and reloads together. */
async function runSingle(config: SluiceConfig, file: string, env: Env, logger: Logger, demoUpstream: boolean): Promise<number> {
  let app: RunningSluice | undefined;
  const reloader = new ConfigReloader({ file, env, config, logger, apply: (next) => app?.reconfigure(next) });
  process.on('SIGHUP', () => void reloader.reload());
  app = await startSluice(config, { logger, ruleStore: true, admin: true, demoUpstream, reloader });
  if (app.adminUrl) logger.info({ url: app.adminUrl }, 'admin API listening');
  if (app.demoUpstreamUrl) logger.info({ url: app.demoUpstreamUrl }, 'demo upstream listening');
  const running = app;
  return untilStopped(logger, () => running.close());
}

/** The primary and its workers; the demo upstream, if asked for, runs in the primary. */
async function runWorkers(config: SluiceConfig, file: string, env: Env, logger: Logger, demoUpstream: boolean): Promise<number> {
  const demo = demoUpstream ? await startDemoUpstream({}) : undefined;
  if (demo) logger.info({ url: demo.url }, 'demo upstream listening');
  try {
    return await (await import('../process/primary.js')).runPrimary({ config, file, env, logger });
  } finally {
    await demo?.close();
  }
}
