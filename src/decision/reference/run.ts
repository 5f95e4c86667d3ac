// `sluice ratelimit`'s service: the decision service's gRPC and HTTP
// listeners, the debug listener, the reference's Prometheus series
// (USE_PROMETHEUS), and the config folder watched and reloaded; a folder that
// fails to load keeps the last good config (logged, counted).
import type { Logger } from 'pino';
import { ConfigError } from '../../config/config-error.js';
import type { SluiceConfig } from '../../config/types.js';
import type { Engine } from '../../limiter/engine.js';
import { resolversFor } from '../../rules/resolvers.js';
import { type DecisionService, startDecisionService } from '../service.js';
import { DebugServer } from './debug-server.js';
import { FolderWatcher } from './folder-watch.js';
import { urlOf } from './http-listen.js';
import { MetricsServer } from './metrics-server.js';
import { ReferenceMetrics } from './prometheus.js';
import type { ReferenceSettings } from './settings.js';
import { loadConfigFolder, withDomains } from './sluice-config.js';

export interface RunningRatelimit {
  readonly grpcAddress: string | undefined;
  readonly httpUrl: string | undefined;
  readonly debugUrl: string;
  /** The Prometheus listener's URL (with its path), when USE_PROMETHEUS=true. */
  readonly metricsUrl: string | undefined;
  /** The config in use (the folder's last good load). */
  readonly config: SluiceConfig;
  close(graceMs?: number): Promise<void>;
}

interface Listeners {
  decision: DecisionService;
  debug: DebugServer;
  debugUrl: string;
  metricsServer: MetricsServer | undefined;
  metricsUrl: string | undefined;
}

export async function startRatelimitService(settings: ReferenceSettings, config: SluiceConfig, engine: Engine, logger: Logger): Promise<RunningRatelimit> {
  const metrics = settings.prometheus ? new ReferenceMetrics(settings.nearLimitRatio, settings.prometheus.responseTimeMs) : undefined;
  metrics?.configLoaded(true);
  const resolvers = resolversFor(config);
  const deps = { engine, rules: resolvers.rules, tenants: resolvers.tenants, logger, observer: metrics };
  let current = config;
  const listeners = await startListeners(settings, config, deps, metrics, () => current);
  const reload = () => {
    const next = reloadedConfig(current, settings, logger);
    metrics?.configLoaded(next !== undefined);
    if (!next) return;
    current = next;
    listeners.decision.reconfigure(next, deps);
  };
  const watcher = new FolderWatcher({ configDir: settings.configDir, runtimeRoot: settings.runtimeRoot, watchRoot: settings.watchRoot, reload, logger });
  watcher.start();
  return {
    grpcAddress: listeners.decision.grpcAddress,
    httpUrl: listeners.decision.httpUrl,
    debugUrl: listeners.debugUrl,
    metricsUrl: listeners.metricsUrl,
    get config() {
      return current;
    },
    async close(graceMs = 10_000) {
      watcher.close();
      listeners.decision.drain();
      await Promise.allSettled([listeners.decision.close(graceMs), listeners.debug.close(), listeners.metricsServer?.close()]);
      await engine.close();
    },
  };
}

/** The decision service, then the debug and metrics listeners; what started is closed again when a later one fails. */
async function startListeners(settings: ReferenceSettings, config: SluiceConfig, deps: Parameters<typeof startDecisionService>[1], metrics: ReferenceMetrics | undefined, current: () => SluiceConfig): Promise<Listeners> {
  const decision = await startDecisionService(config, deps);
  const debug = new DebugServer(() => current().decisionService.domains);
  const metricsServer = metrics && settings.prometheus ? new MetricsServer(metrics.registry, settings.prometheus.path) : undefined;
  try {
    const debugUrl = urlOf(await debug.listen(settings.debug));
    const metricsUrl = metricsServer && settings.prometheus ? `${urlOf(await metricsServer.listen(settings.prometheus.listen))}${settings.prometheus.path}` : undefined;
    return { decision, debug, debugUrl, metricsServer, metricsUrl };
  } catch (error) {
    await Promise.allSettled([decision.close(0), debug.close(), metricsServer?.close()]);
    throw error;
  }
}

/** The folder loaded again, or undefined (logged) when it does not load: the last good config stays. */
function reloadedConfig(current: SluiceConfig, settings: ReferenceSettings, logger: Logger): SluiceConfig | undefined {
  try {
    const next = withDomains(current, settings, loadConfigFolder(settings));
    logger.info({ folder: settings.configDir, domains: [...next.decisionService.domains.keys()] }, 'config folder reloaded');
    return next;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    logger.error({ folder: settings.configDir }, `config folder not reloaded, the last good config stays: ${error.message}`);
    return undefined;
  }
}
