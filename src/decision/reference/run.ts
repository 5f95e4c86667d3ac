// `sluice ratelimit`'s service: the decision service's gRPC and HTTP
// listeners, the debug listener, and the config folder watched and reloaded;
// a folder that fails to load keeps the last good config (logged).
import type { Logger } from 'pino';
import { ConfigError } from '../../config/config-error.js';
import type { SluiceConfig } from '../../config/types.js';
import type { Engine } from '../../limiter/engine.js';
import { resolversFor } from '../../rules/resolvers.js';
import { startDecisionService } from '../service.js';
import { DebugServer } from './debug-server.js';
import { FolderWatcher } from './folder-watch.js';
import type { ReferenceSettings } from './settings.js';
import { loadConfigFolder, withDomains } from './sluice-config.js';

export interface RunningRatelimit {
  readonly grpcAddress: string | undefined;
  readonly httpUrl: string | undefined;
  readonly debugUrl: string;
  /** The config in use (the folder's last good load). */
  readonly config: SluiceConfig;
  close(graceMs?: number): Promise<void>;
}

export async function startRatelimitService(settings: ReferenceSettings, config: SluiceConfig, engine: Engine, logger: Logger): Promise<RunningRatelimit> {
  const resolvers = resolversFor(config);
  const deps = { engine, rules: resolvers.rules, tenants: resolvers.tenants, logger };
  let current = config;
  const decision = await startDecisionService(config, deps);
  const debug = new DebugServer(() => current.decisionService.domains);
  const debugAddress = await debug.listen(settings.debug).catch(async (error: unknown) => {
    await decision.close(0);
    throw error;
  });
  const reload = () => {
    const next = reloadedConfig(current, settings, logger);
    if (!next) return;
    current = next;
    decision.reconfigure(next, deps);
  };
  const watcher = new FolderWatcher({ configDir: settings.configDir, runtimeRoot: settings.runtimeRoot, watchRoot: settings.watchRoot, reload, logger });
  watcher.start();
  return {
    grpcAddress: decision.grpcAddress,
    httpUrl: decision.httpUrl,
    debugUrl: `http://${debugAddress.address.includes(':') ? `[${debugAddress.address}]` : debugAddress.address}:${debugAddress.port}`,
    get config() {
      return current;
    },
    async close(graceMs = 10_000) {
      watcher.close();
      decision.drain();
      await Promise.allSettled([decision.close(graceMs), debug.close()]);
      await engine.close();
    },
  };
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
