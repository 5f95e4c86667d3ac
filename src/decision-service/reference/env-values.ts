// How the reference reads its environment (Go's envconfig): booleans as
// strconv.ParseBool, integers, durations; each bad value a ConfigError naming
// the variable, never its value when it may be a secret.
import { ConfigError } from '../../config/config-error.js';
import type { Env } from '../../config/env.js';

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

/** A variable set to something (an empty value is unset, as envconfig reads it for most types). */
export const isSet = (env: Env, name: string): boolean => env[name] !== undefined && env[name] !== '';

export function text(env: Env, name: string, fallback: string): string {
  return isSet(env, name) ? (env[name] as string) : fallback;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  if (!isSet(env, name)) return fallback;
  const value = env[name] as string;
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw new ConfigError(name, undefined, undefined, `must be true or false, not ${JSON.stringify(value)}`);
}

export function port(env: Env, name: string, fallback: number): number {
  if (!isSet(env, name)) return fallback;
  const value = env[name] as string;
  const parsed = Number(value);
  if (!/^\d{1,5}$/.test(value) || parsed > 65_535) throw new ConfigError(name, undefined, undefined, `must be a port from 0 to 65535, not ${JSON.stringify(value)}`);
  return parsed;
}

export function ratio(env: Env, name: string, fallback: number): number {
  if (!isSet(env, name)) return fallback;
  const value = Number(env[name]);
  if (!Number.isFinite(value) || value < 0 || value > 1) throw new ConfigError(name, undefined, undefined, `must be a number from 0 to 1, not ${JSON.stringify(env[name])}`);
  return value;
}

/** `HOST`:`PORT` as a listen address (`::` and other IPv6 hosts bracketed). */
export const listenText = (host: string, portNumber: number): string => `${host.includes(':') ? `[${host}]` : host}:${portNumber}`;

/** `:9090` or `host:9090` (PROMETHEUS_ADDR, Go's listen syntax): an empty host is every interface. */
export function goAddress(env: Env, name: string, fallback: string): { host: string; port: number } {
  const value = text(env, name, fallback);
  const colon = value.lastIndexOf(':');
  const portText = value.slice(colon + 1);
  if (colon < 0 || !/^\d{1,5}$/.test(portText) || Number(portText) > 65_535) throw new ConfigError(name, undefined, undefined, `must be host:port or :port, not ${JSON.stringify(value)}`);
  const host = value.slice(0, colon).replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port: Number(portText) };
}
