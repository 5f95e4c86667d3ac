// `sluice ratelimit`: a drop-in for envoyproxy/ratelimit's `ratelimit` binary,
// configured as it is, by its environment variables (RUNTIME_ROOT…, GRPC_PORT,
// PORT, REDIS_URL…) with Sluice's SLUICE_* beside them. Runs until SIGTERM or
// SIGINT; a bad variable or config folder exits 2 with one line naming it.
import { engineFromConfig } from '../app.js';
import { ConfigError } from '../config/config-error.js';
import type { Env } from '../config/env.js';
import { referenceLogger } from '../decision-service/reference/logger.js';
import { startRatelimitService } from '../decision-service/reference/run.js';
import { type ReferenceSettings, referenceSettings } from '../decision-service/reference/settings.js';
import { sluiceConfigOf } from '../decision-service/reference/sluice-config.js';
import { untilStopped } from '../process/stop.js';
import type { Command } from './command.js';

export const command: Command = {
  summary: "run envoyproxy/ratelimit's service, configured by its environment variables (RUNTIME_ROOT, GRPC_PORT, PORT, REDIS_URL…)",
  async run() {
    const loaded = loadOrReport(process.env);
    if (!loaded) return 2;
    const { settings, config } = loaded;
    const logger = referenceLogger(settings.log.level, settings.log.json);
    process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
    for (const { variable, reason } of settings.ignored) logger.warn({ variable }, `${variable} is not used by Sluice: ${reason}`);
    if (!settings.store.section) logger.warn('REDIS_URL is not set: buckets are kept in this process’s memory, not shared with other instances');
    const running = await startRatelimitService(settings, config, engineFromConfig(config, logger), logger);
    logger.info({ grpc: running.grpcAddress, http: running.httpUrl, debug: running.debugUrl, metrics: running.metricsUrl, folder: settings.configDir, domains: [...config.decisionService.domains.keys()] }, 'sluice ratelimit serving');
    return untilStopped(logger, () => running.close());
  },
};

function loadOrReport(env: Env): { settings: ReferenceSettings; config: ReturnType<typeof sluiceConfigOf> } | undefined {
  try {
    const settings = referenceSettings(env);
    return { settings, config: sluiceConfigOf(settings, env) };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`sluice ratelimit: ${error.message}\n`);
    return undefined;
  }
}
