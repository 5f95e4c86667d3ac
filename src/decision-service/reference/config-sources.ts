// Where `sluice ratelimit`'s domains come from after the start: the config
// folder, watched (CONFIG_TYPE=FILE), or an xDS server (GRPC_XDS_SOTW). Both
// hand each good load to `apply`; a load that fails keeps the last good one,
// logged and counted through `failed`.
import type { Logger } from 'pino';
import { ConfigError } from '../../config/config-error.js';
import type { LoadedEnvoyConfig } from '../envoy-config.js';
import { FolderWatcher } from './folder-watch.js';
import type { ReferenceSettings } from './settings.js';
import { loadConfigFolder } from './sluice-config.js';
import { XdsClient } from './xds-client.js';
import { domainsFromXds } from './xds-resources.js';

export interface ConfigSourceHooks {
  apply(loaded: LoadedEnvoyConfig): void;
  failed(): void;
  logger: Logger;
}

export interface ConfigSource {
  /** Resolves at the first good load (xDS); the folder's first load happened before the start. */
  readonly firstLoad: Promise<void>;
  close(): void;
}

export function startConfigSource(settings: ReferenceSettings, hooks: ConfigSourceHooks): ConfigSource {
  return settings.xds ? startXds(settings, hooks) : startFolder(settings, hooks);
}

function startFolder(settings: ReferenceSettings, { apply, failed, logger }: ConfigSourceHooks): ConfigSource {
  const reload = () => {
    try {
      const loaded = loadConfigFolder(settings);
      logger.info({ folder: settings.configDir, domains: [...loaded.domains.keys()] }, 'config folder reloaded');
      apply(loaded);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      logger.error({ folder: settings.configDir }, `config folder not reloaded, the last good config stays: ${error.message}`);
      failed();
    }
  };
  const watcher = new FolderWatcher({ configDir: settings.configDir, runtimeRoot: settings.runtimeRoot, watchRoot: settings.watchRoot, reload, logger });
  watcher.start();
  return { firstLoad: Promise.resolve(), close: () => watcher.close() };
}

function startXds(settings: ReferenceSettings, { apply, failed, logger }: ConfigSourceHooks): ConfigSource {
  const xds = settings.xds!;
  let loadedOnce: () => void = () => {};
  const firstLoad = new Promise<void>((resolve) => {
    loadedOnce = resolve;
  });
  const client = new XdsClient(
    xds,
    (configs, version) => {
      try {
        const domains = domainsFromXds(configs, settings.mergeDomains);
        logger.info({ server: xds.serverUrl, version, domains: [...domains.keys()] }, 'xDS config applied');
        apply({ domains, warnings: [] });
        loadedOnce();
        return undefined;
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        logger.error({ server: xds.serverUrl, version }, `xDS config refused (NACK), the last good config stays: ${error.message}`);
        failed();
        return error.message;
      }
    },
    logger,
  );
  client.start();
  return { firstLoad, close: () => client.close() };
}
