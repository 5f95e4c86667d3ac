// `sluice ratelimit`'s service: the decision service's gRPC and HTTP
// listeners, the debug listener, the reference's Prometheus series
// (USE_PROMETHEUS), and the config folder watched and reloaded; a folder that
// fails to load keeps the last good config (logged, counted).
import type { Logger } from 'pino';
import type { SluiceConfig } from '../../config/types.js';
import type { Engine } from '../../limiter/engine/engine.js';
import { resolversFor } from '../../rules/resolvers.js';
import { type DecisionService, startDecisionService } from '../service.js';
import { DebugServer } from './debug-server.js';
import { startConfigSource } from './config-sources.js';
import { urlOf } from './http-listen.js';
import { MetricsServer } from './metrics-server.js';
import { ReferenceMetrics } from './prometheus.js';
import type { ReferenceSettings } from './settings.js';
import { withDomains } from './sluice-config.js';
import type { LoadedEnvoyConfig } from '../envoy-config.js';

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
  if (!settings.xds) metrics?.configLoaded(true);
  const resolvers = resolversFor(config);
  const deps = { engine, rules: resolvers.rules, tenants: resolvers.tenants, logger, observer: metrics };
  let current = config;
  let listeners: Listeners | undefined;
  // The reference logs each config load at debug level.
  const loadedDebug = (domains: SluiceConfig['decisionService']['domains']) => logger.debug({ domains: [...domains.keys()] }, 'config loaded');
  if (!settings.xds) loadedDebug(config.decisionService.domains);
  const apply = (loaded: LoadedEnvoyConfig) => {
    loadedDebug(loaded.domains);
    metrics?.configLoaded(true);
    current = withDomains(current, settings, loaded);
    listeners?.decision.reconfigure(current, deps);
  };
  const source = startConfigSource(settings, { apply, failed: () => metrics?.configLoaded(false), logger });
  // The reference waits for its first xDS config unless FORCE_START_WITHOUT_INITIAL_CONFIG.
  if (settings.xds && !settings.forceStart) await source.firstLoad;
  const started = await startListeners(settings, current, deps, metrics, () => current).catch(async (error: unknown) => {
    // A port taken: nothing may keep the process alive (the watcher, the xDS stream, Redis).
    source.close();
    await engine.close();
    throw error;
  });
  listeners = started;
  return {
    grpcAddress: started.decision.grpcAddress,
    httpUrl: started.decision.httpUrl,
    debugUrl: started.debugUrl,
    metricsUrl: started.metricsUrl,
    get config() {
      return current;
    },
    async close(graceMs = 10_000) {
      source.close();
      started.decision.drain();
      await Promise.allSettled([started.decision.close(graceMs), started.debug.close(), started.metricsServer?.close()]);
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
