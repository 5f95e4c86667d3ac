// The reference's settings as a Sluice config: the decision service's two
// listeners, the store, the log level, and the config folder's domains. Sluice's
// own options ride beside them in SLUICE_* variables (the usual overrides, and
// SLUICE_RESILIENCE / SLUICE_STORE_DEADLINE_MS / SLUICE_HEADERS_IETF here).
import { parse, stringify } from 'yaml';
import { ConfigError } from '../../config/config-error.js';
import type { Env } from '../../config/env.js';
import { parseConfig } from '../load-config.js';
import type { SluiceConfig } from '../../config/types.js';
import { type LoadedEnvoyConfig, loadEnvoyFiles } from '../envoy-config.js';
import { bool, listenText } from './env-values.js';
import { readGrpcTls } from './grpc-tls-files.js';
import { storeSectionOf } from './redis.js';
import type { ReferenceSettings } from './settings.js';

/** The loader wants a route; `sluice ratelimit` runs no gateway, so it is dropped again (and /decide answers 404). */
const NO_GATEWAY_ROUTE = { id: 'ratelimit', path: '/*', upstream: 'http://127.0.0.1:9' };

/** Which variable set each config field, so that an error names it. */
const FIELD_VARIABLES: [RegExp, string][] = [
  [/^resilience\b/, 'SLUICE_RESILIENCE'],
  [/^store\.deadlineMs/, 'SLUICE_STORE_DEADLINE_MS'],
  [/^store\b/, 'REDIS_URL'],
  [/^decisionService\.grpcListen/, 'GRPC_HOST/GRPC_PORT'],
  [/^decisionService\.httpListen/, 'HOST/PORT'],
];

export function sluiceConfigOf(settings: ReferenceSettings, env: Env): SluiceConfig {
  const raw = {
    routes: [NO_GATEWAY_ROUTE],
    store: { ...storeSectionOf(settings.store), ...deadlineOf(env) },
    resilience: resilienceOf(env),
    headers: { ietf: bool(env, 'SLUICE_HEADERS_IETF', false) },
    decisionService: { grpcListen: listenText(settings.grpc.host, settings.grpc.port), httpListen: listenText(settings.http.host, settings.http.port), mergeDomains: settings.mergeDomains, shadowMode: settings.shadowMode },
    log: { level: settings.log.level },
  };
  let config: SluiceConfig;
  try {
    config = parseConfig(stringify(raw), { source: 'environment', env });
  } catch (error) {
    throw error instanceof ConfigError ? namedByVariable(error) : error;
  }
  const decisionService = { ...config.decisionService, grpcTls: readGrpcTls(settings.grpcTls), grpcConnectionAge: settings.grpcConnectionAge, grpcUnixSocket: settings.grpcUds };
  // With xDS the domains arrive from the server; until then there are none.
  const loaded = settings.xds ? { domains: new Map(), warnings: [] } : loadConfigFolder(settings);
  return withDomains({ ...config, routes: [], decisionService }, settings, loaded);
}

/** The config folder's files, as the reference reads RUNTIME_ROOT/RUNTIME_SUBDIRECTORY/RUNTIME_APPDIRECTORY/*.yaml. */
export function loadConfigFolder(settings: ReferenceSettings): LoadedEnvoyConfig {
  return loadEnvoyFiles([settings.configDir], { mergeDomains: settings.mergeDomains, ignoreDotFiles: settings.ignoreDotFiles });
}

/** The config with another load of the folder in it (a reload). */
export function withDomains(config: SluiceConfig, settings: ReferenceSettings, loaded: LoadedEnvoyConfig): SluiceConfig {
  return { ...config, decisionService: { ...config.decisionService, envoyConfig: [settings.configDir], domains: loaded.domains, warnings: loaded.warnings } };
}

function deadlineOf(env: Env): { deadlineMs?: number } {
  const value = env.SLUICE_STORE_DEADLINE_MS;
  if (value === undefined || value === '') return {};
  if (!/^\d+(\.\d+)?$/.test(value)) throw new ConfigError('SLUICE_STORE_DEADLINE_MS', undefined, undefined, 'must be a number of milliseconds');
  return { deadlineMs: Number(value) };
}

/** SLUICE_RESILIENCE: the `resilience:` section as a YAML flow mapping, e.g. `{breaker: {failureThreshold: 3}}`. */
function resilienceOf(env: Env): Record<string, unknown> {
  const value = env.SLUICE_RESILIENCE;
  if (value === undefined || value === '') return {};
  let parsed: unknown;
  try {
    parsed = parse(value);
  } catch (error) {
    throw new ConfigError('SLUICE_RESILIENCE', undefined, undefined, `must be a YAML mapping: ${(error as Error).message.split('\n')[0]}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ConfigError('SLUICE_RESILIENCE', undefined, undefined, 'must be a YAML mapping, e.g. {breaker: {failureThreshold: 3}}');
  return parsed as Record<string, unknown>;
}

/** An error in the generated config, re-named after the variable behind its field. */
function namedByVariable(error: ConfigError): ConfigError {
  const field = error.field;
  const variable = field === undefined ? undefined : FIELD_VARIABLES.find(([pattern]) => pattern.test(field))?.[1];
  if (!variable || field === undefined) return error;
  const message = error.message.slice(error.message.indexOf(`${field}: `) + field.length + 2);
  return new ConfigError(variable, undefined, field, message);
}
