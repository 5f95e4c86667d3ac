// The reference's `ratelimit` binary is configured by environment variables
// (its src/settings/settings.go, with its defaults); these are the ones
// Sluice's `sluice ratelimit` reads, each checked and named in its errors.
import { join } from 'node:path';
import { ConfigError } from '../../config/config-error.js';
import type { Env } from '../../config/env.js';
import type { ListenAddress, LogLevel } from '../../config/types.js';
import { bool, goAddress, isSet, port, ratio, text } from './env-values.js';
import { ignoredVariablesSet } from './ignored-variables.js';
import { type ReferenceStore, referenceStoreSection } from './redis.js';
import type { XdsSettings } from './xds-client.js';
import { goDurationMs, xdsSettingsOf } from './xds-settings.js';
import type { GrpcTlsSettings } from './grpc-tls-files.js';

export type { GrpcTlsSettings } from './grpc-tls-files.js';

export interface ReferenceSettings {
  /** RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY: the folder of config files. */
  configDir: string;
  runtimeRoot: string;
  /** RUNTIME_WATCH_ROOT: also watch RUNTIME_ROOT itself being swapped (a symlink). */
  watchRoot: boolean;
  ignoreDotFiles: boolean;
  mergeDomains: boolean;
  grpc: ListenAddress;
  /** GRPC_UDS: gRPC on this unix socket instead of GRPC_HOST:GRPC_PORT. */
  grpcUds: string | undefined;
  http: ListenAddress;
  debug: ListenAddress;
  log: { level: LogLevel; json: boolean };
  shadowMode: boolean;
  nearLimitRatio: number;
  prometheus: { listen: ListenAddress; path: string; responseTimeMs: boolean } | undefined;
  grpcTls: GrpcTlsSettings | undefined;
  /** GRPC_MAX_CONNECTION_AGE / _GRACE. */
  grpcConnectionAge: { maxAgeMs: number; graceMs: number };
  store: ReferenceStore;
  /** CONFIG_TYPE=GRPC_XDS_SOTW: configs from this xDS server instead of the folder. */
  xds: XdsSettings | undefined;
  /** FORCE_START_WITHOUT_INITIAL_CONFIG: with xDS, listen before the first config arrives. */
  forceStart: boolean;
  /** Set variables Sluice does not use, with why (logged once). */
  ignored: { variable: string; reason: string }[];
}

const LOG_LEVELS: Record<string, LogLevel> = { trace: 'trace', debug: 'debug', info: 'info', warn: 'warn', warning: 'warn', error: 'error', fatal: 'fatal', panic: 'fatal' };

export function referenceSettings(env: Env): ReferenceSettings {
  const runtimeRoot = text(env, 'RUNTIME_ROOT', '/srv/runtime_data/current');
  const level = LOG_LEVELS[text(env, 'LOG_LEVEL', 'WARN').toLowerCase()];
  if (!level) throw new ConfigError('LOG_LEVEL', undefined, undefined, `must be one of trace, debug, info, warn, error, fatal, panic, not ${JSON.stringify(env.LOG_LEVEL)}`);
  return {
    configDir: join(runtimeRoot, text(env, 'RUNTIME_SUBDIRECTORY', ''), text(env, 'RUNTIME_APPDIRECTORY', 'config')),
    runtimeRoot,
    watchRoot: bool(env, 'RUNTIME_WATCH_ROOT', true),
    ignoreDotFiles: bool(env, 'RUNTIME_IGNOREDOTFILES', false),
    mergeDomains: bool(env, 'MERGE_DOMAIN_CONFIG', false),
    grpc: { host: text(env, 'GRPC_HOST', '0.0.0.0'), port: port(env, 'GRPC_PORT', 8081) },
    grpcUds: isSet(env, 'GRPC_UDS') ? (env.GRPC_UDS as string) : undefined,
    http: { host: text(env, 'HOST', '0.0.0.0'), port: port(env, 'PORT', 8080) },
    debug: { host: text(env, 'DEBUG_HOST', '0.0.0.0'), port: port(env, 'DEBUG_PORT', 6070) },
    // The reference writes text unless LOG_FORMAT is json.
    log: { level, json: text(env, 'LOG_FORMAT', 'text').toLowerCase() === 'json' },
    shadowMode: bool(env, 'SHADOW_MODE', false),
    nearLimitRatio: ratio(env, 'NEAR_LIMIT_RATIO', 0.8),
    prometheus: bool(env, 'USE_PROMETHEUS', false)
      ? { listen: goAddress(env, 'PROMETHEUS_ADDR', ':9090'), path: text(env, 'PROMETHEUS_PATH', '/metrics'), responseTimeMs: bool(env, 'PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS', false) }
      : undefined,
    grpcTls: grpcTlsOf(env),
    grpcConnectionAge: { maxAgeMs: goDurationMs(env, 'GRPC_MAX_CONNECTION_AGE', '24h'), graceMs: goDurationMs(env, 'GRPC_MAX_CONNECTION_AGE_GRACE', '1h') },
    store: referenceStoreSection(env),
    xds: configType(env) === 'GRPC_XDS_SOTW' ? xdsSettingsOf(env) : undefined,
    forceStart: bool(env, 'FORCE_START_WITHOUT_INITIAL_CONFIG', false),
    ignored: [...ignoredVariablesSet(env), ...configSourceIgnored(env), ...tlsIgnored(env)],
  };
}

function grpcTlsOf(env: Env): GrpcTlsSettings | undefined {
  if (!bool(env, 'GRPC_SERVER_USE_TLS', false)) return undefined;
  for (const name of ['GRPC_SERVER_TLS_CERT', 'GRPC_SERVER_TLS_KEY']) {
    if (!isSet(env, name)) throw new ConfigError(name, undefined, undefined, 'is required with GRPC_SERVER_USE_TLS=true');
  }
  if (isSet(env, 'GRPC_CLIENT_TLS_SAN') && !isSet(env, 'GRPC_CLIENT_TLS_CACERT')) throw new ConfigError('GRPC_CLIENT_TLS_SAN', undefined, undefined, 'needs GRPC_CLIENT_TLS_CACERT: only a client certificate can name a SAN');
  return {
    certFile: env.GRPC_SERVER_TLS_CERT as string,
    keyFile: env.GRPC_SERVER_TLS_KEY as string,
    clientCaFile: isSet(env, 'GRPC_CLIENT_TLS_CACERT') ? (env.GRPC_CLIENT_TLS_CACERT as string) : undefined,
    clientSan: isSet(env, 'GRPC_CLIENT_TLS_SAN') ? (env.GRPC_CLIENT_TLS_SAN as string) : undefined,
  };
}

/** The listener's TLS files without GRPC_SERVER_USE_TLS=true: read by neither service. */
function tlsIgnored(env: Env): { variable: string; reason: string }[] {
  if (bool(env, 'GRPC_SERVER_USE_TLS', false)) return [];
  return ['GRPC_SERVER_TLS_CERT', 'GRPC_SERVER_TLS_KEY', 'GRPC_CLIENT_TLS_CACERT', 'GRPC_CLIENT_TLS_SAN'].filter((name) => isSet(env, name)).map((variable) => ({ variable, reason: 'read only with GRPC_SERVER_USE_TLS=true' }));
}

function configType(env: Env): 'FILE' | 'GRPC_XDS_SOTW' {
  const type = text(env, 'CONFIG_TYPE', 'FILE').toUpperCase();
  if (type !== 'FILE' && type !== 'GRPC_XDS_SOTW') throw new ConfigError('CONFIG_TYPE', undefined, undefined, `must be FILE or GRPC_XDS_SOTW, not ${JSON.stringify(env.CONFIG_TYPE)}`);
  return type;
}

/** CONFIG_TYPE=FILE (the config folder): the xDS variables are read only with GRPC_XDS_SOTW. */
function configSourceIgnored(env: Env): { variable: string; reason: string }[] {
  if (configType(env) === 'GRPC_XDS_SOTW') {
    const unread = ['CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL', 'XDS_CLIENT_BACKOFF_RANDOM_FACTOR', 'XDS_CLIENT_BACKOFF_JITTER', 'XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES'];
    return unread.filter((name) => isSet(env, name)).map((variable) => ({ variable, reason: 'the reconnect pause doubles from XDS_CLIENT_BACKOFF_INITIAL_INTERVAL, without jitter; grpc-js bounds message sizes' }));
  }
  return Object.keys(env)
    .filter((name) => /^(CONFIG_GRPC_XDS_|XDS_CLIENT_|FORCE_START_WITHOUT_INITIAL_CONFIG$)/.test(name) && isSet(env, name))
    .map((variable) => ({ variable, reason: 'read only with CONFIG_TYPE=GRPC_XDS_SOTW' }));
}
