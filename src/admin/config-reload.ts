// Reload without downtime: re-read and validate the config file, apply what can
// change while serving, keep the old config when the new one is invalid (a bad
// reload never takes a working instance down). Used by SIGHUP, `sluice reload`
// (POST /reload) and, with workers, by the primary for all of them.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { ConfigError, type SluiceConfig } from '../config/index.js';
import { loadConfig } from '../decision-service/load-config.js';
import type { Env } from '../config/env.js';
import { configReloads, noteConfigLoaded } from './process-metrics.js';

/** Fields read once at start: a reload that changes them applies the rest and says these wait for a restart. */
export const RESTART_FIELDS = ['listen', 'admin', 'store', 'resilience', 'database', 'dataDir', 'instances', 'region', 'workers', 'log', 'rules', 'defaultRule', 'tracing', 'notifications'] as const;
/** Listener protections set on the socket server (and its HTTP/2 sessions) when it starts. */
const RESTART_LIMITS = ['maxHeaderBytes', 'headerTimeoutMs', 'requestTimeoutMs', 'keepAliveTimeoutMs', 'maxQueued', 'http2MaxConcurrentStreams', 'http2MaxResetsPerSecond', 'http2ResetCooldownMs'] as const;
/** The decision service's listeners, and the gRPC server's bounds on one call (set when it starts): the file's name → the loaded field. */
const RESTART_DECISION = { grpcListen: 'grpcListen', httpListen: 'httpListen', grpcMaxMessageBytes: 'maxMessageBytes', maxDescriptors: 'maxDescriptors', maxDescriptorEntries: 'maxEntries' } as const;

/**
 * Every restart-only field as the file names it; the schema marks the same
 * ones `reload: false` (test/docs/config-reference.test.ts keeps them equal),
 * and docs/configuration-reference.md says so per option.
 */
export const RESTART_PATHS: readonly string[] = [...RESTART_FIELDS, ...RESTART_LIMITS.map((limit) => `limits.${limit}`), 'tls.redirectHttp', ...Object.keys(RESTART_DECISION).map((field) => `decisionService.${field}`)];

export interface LoadedConfig {
  /** First 12 hex digits of the file's SHA-256. */
  hash: string;
  /** ISO time it was loaded. */
  loadedAt: string;
  /** Restart-only fields the file changed since the process started (present when any): not live yet. */
  needsRestart?: string[];
}

export type ReloadReport =
  | ({ outcome: 'applied'; needsRestart: string[] } & LoadedConfig)
  | { outcome: 'invalid'; error: string; field: string | undefined };

export interface ConfigReloaderOptions {
  file: string;
  env: Env;
  /** The config the process started with. */
  config: SluiceConfig;
  /** Puts a validated config to use; may reject (then the reload counts as invalid). */
  apply: (config: SluiceConfig) => Promise<void> | void;
  logger: Logger;
}

export class ConfigReloader {
  /** What the restart-only fields hold while the process runs: the config it started with. */
  private readonly running: SluiceConfig;
  private current: SluiceConfig;
  private loaded: LoadedConfig;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: ConfigReloaderOptions) {
    this.running = options.config;
    this.current = options.config;
    this.loaded = this.note(fileHash(options.file), []);
  }

  get config(): SluiceConfig {
    return this.current;
  }

  status(): LoadedConfig {
    return this.loaded;
  }

  /** One reload at a time: a second SIGHUP waits for the first. */
  reload(): Promise<ReloadReport> {
    const next = this.queue.then(() => this.reloadNow());
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async reloadNow(): Promise<ReloadReport> {
    const { file, logger } = this.options;
    let config: SluiceConfig;
    let hash: string;
    try {
      hash = fileHash(file);
      config = loadConfig(file, this.options.env);
      await this.options.apply(config);
    } catch (error) {
      configReloads.labels('invalid').inc();
      const field = error instanceof ConfigError ? error.field : undefined;
      const message = error instanceof Error ? error.message : String(error);
      logger.error({ err: message }, 'config reload refused: still serving the previous config');
      return { outcome: 'invalid', error: message, field };
    }
    // Against what runs, not the last file: a second reload of a changed file still says the change waits.
    const needsRestart = restartOnlyChanges(this.running, config);
    if (needsRestart.length > 0) logger.warn({ fields: needsRestart }, 'config reload: these fields take effect only after a restart');
    this.current = config;
    this.loaded = this.note(hash, needsRestart);
    configReloads.labels('applied').inc();
    logger.info({ hash, routes: config.routes.length }, 'config reloaded');
    return { outcome: 'applied', ...this.loaded, needsRestart };
  }

  private note(hash: string, needsRestart: string[]): LoadedConfig {
    const now = Date.now();
    noteConfigLoaded(hash, now);
    return { hash, loadedAt: new Date(now).toISOString(), ...(needsRestart.length > 0 ? { needsRestart } : {}) };
  }
}

/** The restart-only fields whose value differs, e.g. `listen`, `limits.keepAliveTimeoutMs`. */
export function restartOnlyChanges(before: SluiceConfig, after: SluiceConfig): string[] {
  const differs = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b);
  const fields: string[] = RESTART_FIELDS.filter((field) => differs(before[field], after[field]));
  for (const limit of RESTART_LIMITS) if (before.limits[limit] !== after.limits[limit]) fields.push(`limits.${limit}`);
  // Certificates are read again on every reload; turning TLS on or off, or moving its redirect listener, takes a restart.
  if ((before.tls === undefined) !== (after.tls === undefined)) fields.push('tls');
  else if (differs(before.tls?.redirectHttp, after.tls?.redirectHttp)) fields.push('tls.redirectHttp');
  // The decision service's listeners stay where they are, with their bounds; its domains and routes reload.
  for (const [field, loaded] of Object.entries(RESTART_DECISION)) {
    const value = (config: SluiceConfig) => (loaded === 'grpcListen' || loaded === 'httpListen' ? config.decisionService[loaded] : config.decisionService.grpcLimits[loaded]);
    if (differs(value(before), value(after))) fields.push(`decisionService.${field}`);
  }
  return fields;
}

function fileHash(file: string): string {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex').slice(0, 12);
  } catch {
    return 'unreadable';
  }
}
