// The reference's CONFIG_GRPC_XDS_* and XDS_CLIENT_* variables, read with
// CONFIG_TYPE=GRPC_XDS_SOTW; Go durations (`10s`, `500ms`, `1m30s`).
import { ConfigError } from '../../config/config-error.js';
import type { Env } from '../../config/env.js';
import { bool, isSet, text } from './env-values.js';
import { pemFile } from './grpc-tls-files.js';
import type { XdsSettings } from './xds-client.js';

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

export function goDurationMs(env: Env, name: string, fallback: string): number {
  const value = text(env, name, fallback);
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== value) throw new ConfigError(name, undefined, undefined, `must be a duration such as 10s or 500ms, not ${JSON.stringify(value)}`);
  return parts.reduce((total, part) => total + Number(part[1]) * (UNIT_MS[part[2]!] ?? 0), 0);
}

/** `k1:v1,k2:v2` (also `k=v`): node metadata, extra headers. */
function pairs(env: Env, name: string): Record<string, string> {
  if (!isSet(env, name)) return {};
  const out: Record<string, string> = {};
  for (const item of (env[name] as string).split(',').map((part) => part.trim()).filter(Boolean)) {
    const at = item.search(/[:=]/);
    if (at <= 0) throw new ConfigError(name, undefined, undefined, `${JSON.stringify(item)} must be key:value`);
    out[item.slice(0, at)] = item.slice(at + 1);
  }
  return out;
}

/** CONFIG_GRPC_XDS_SERVER_USE_TLS: the server's CA, a client certificate for mutual TLS, the name its certificate must carry. */
function xdsTlsOf(env: Env): XdsSettings['tls'] {
  if (!bool(env, 'CONFIG_GRPC_XDS_SERVER_USE_TLS', false)) return undefined;
  const file = (name: string) => (isSet(env, name) ? pemFile(name, env[name] as string) : undefined);
  const tls = { ca: file('CONFIG_GRPC_XDS_SERVER_TLS_CACERT'), cert: file('CONFIG_GRPC_XDS_CLIENT_TLS_CERT'), key: file('CONFIG_GRPC_XDS_CLIENT_TLS_KEY'), san: isSet(env, 'CONFIG_GRPC_XDS_SERVER_TLS_SAN') ? (env.CONFIG_GRPC_XDS_SERVER_TLS_SAN as string) : undefined };
  if ((tls.cert === undefined) !== (tls.key === undefined)) throw new ConfigError(tls.cert ? 'CONFIG_GRPC_XDS_CLIENT_TLS_KEY' : 'CONFIG_GRPC_XDS_CLIENT_TLS_CERT', undefined, undefined, 'the client certificate and its key go together');
  return tls;
}

export function xdsSettingsOf(env: Env): XdsSettings {
  const initialBackoffMs = goDurationMs(env, 'XDS_CLIENT_BACKOFF_INITIAL_INTERVAL', '10s');
  return {
    serverUrl: text(env, 'CONFIG_GRPC_XDS_SERVER_URL', 'localhost:18000'),
    nodeId: text(env, 'CONFIG_GRPC_XDS_NODE_ID', 'default'),
    nodeMetadata: pairs(env, 'CONFIG_GRPC_XDS_NODE_METADATA'),
    headers: pairs(env, 'CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS'),
    initialBackoffMs,
    maxBackoffMs: Math.max(initialBackoffMs, goDurationMs(env, 'XDS_CLIENT_BACKOFF_MAX_INTERVAL', '60s')),
    tls: xdsTlsOf(env),
  };
}
