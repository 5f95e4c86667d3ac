// The reference's Redis variables → Sluice's `store:` section:
// referenceStoreSection maps every variable onto the store's connection fields
// (url/cluster/sentinel, username/password, tls files), and storeSectionOf
// refuses by name the one no store option expresses, rather than connecting
// with less security than asked (see docs/decision-service.md).
import { ConfigError } from '../../config/config-error.js';
import type { Env } from '../../config/env.js';
import { bool, isSet, text } from './env-values.js';

export interface TlsFilesSection {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface StoreSection {
  url?: string;
  cluster?: string[];
  username?: string;
  password?: string;
  tls?: TlsFilesSection;
  sentinel?: { name: string; sentinels: string[]; username?: string; password?: string };
}

export interface ReferenceStore {
  /** undefined: no REDIS_URL, buckets in this process's memory. */
  section: StoreSection | undefined;
  /** Variables set that no store field expresses (REDIS_TLS_SKIP_HOSTNAME_VERIFICATION: the chain checked, not the name). */
  unmapped: string[];
}

const HOST_PORT = /^[A-Za-z0-9.-]+:\d{1,5}$/;

/** `password` or `username:password`, as REDIS_AUTH and REDIS_SENTINEL_AUTH take it. */
function credentials(env: Env, name: string): { username?: string; password?: string } {
  if (!isSet(env, name)) return {};
  const value = env[name] as string;
  const colon = value.indexOf(':');
  return colon < 0 ? { password: value } : { username: value.slice(0, colon), password: value.slice(colon + 1) };
}

function seeds(value: string, variable: string): string[] {
  const list = value.split(',').map((part) => part.trim()).filter(Boolean);
  for (const seed of list) if (!HOST_PORT.test(seed)) throw new ConfigError(variable, undefined, undefined, `${JSON.stringify(seed)} must be host:port`);
  return list;
}

export function referenceStoreSection(env: Env): ReferenceStore {
  if (!isSet(env, 'REDIS_URL')) return { section: undefined, unmapped: [] };
  const url = env.REDIS_URL as string;
  const socketType = text(env, 'REDIS_SOCKET_TYPE', url.startsWith('/') ? 'unix' : 'tcp').toLowerCase();
  if (socketType === 'unix') throw new ConfigError('REDIS_SOCKET_TYPE', undefined, undefined, 'unix: Sluice reaches Redis over TCP only; set REDIS_SOCKET_TYPE=tcp and REDIS_URL=host:port');
  if (socketType !== 'tcp') throw new ConfigError('REDIS_SOCKET_TYPE', undefined, undefined, `must be tcp or unix, not ${JSON.stringify(socketType)}`);
  const tls = bool(env, 'REDIS_TLS', false);
  const files: TlsFilesSection = {};
  if (isSet(env, 'REDIS_TLS_CACERT')) files.ca = env.REDIS_TLS_CACERT as string;
  if (isSet(env, 'REDIS_TLS_CLIENT_CERT')) files.cert = env.REDIS_TLS_CLIENT_CERT as string;
  if (isSet(env, 'REDIS_TLS_CLIENT_KEY')) files.key = env.REDIS_TLS_CLIENT_KEY as string;
  const section: StoreSection = { ...credentials(env, 'REDIS_AUTH'), ...(tls ? { tls: files } : {}) };
  const type = text(env, 'REDIS_TYPE', 'single').toLowerCase();
  if (type === 'single') section.url = singleUrl(url, tls);
  else if (type === 'cluster') section.cluster = seeds(url, 'REDIS_URL');
  else if (type === 'sentinel') {
    const [name, ...sentinels] = url.split(',').map((part) => part.trim());
    if (!name || sentinels.length === 0) throw new ConfigError('REDIS_URL', undefined, undefined, 'with REDIS_TYPE=sentinel: the master name, then host:port sentinels, comma-separated');
    section.sentinel = { name, sentinels: seeds(sentinels.join(','), 'REDIS_URL'), ...credentials(env, 'REDIS_SENTINEL_AUTH') };
  } else throw new ConfigError('REDIS_TYPE', undefined, undefined, `must be single, cluster or sentinel, not ${JSON.stringify(type)}`);
  const unmapped = tls && bool(env, 'REDIS_TLS_SKIP_HOSTNAME_VERIFICATION', false) ? ['REDIS_TLS_SKIP_HOSTNAME_VERIFICATION'] : [];
  return { section, unmapped };
}

/** `host:port` (the reference's form) or a redis:// / rediss:// URL. */
function singleUrl(url: string, tls: boolean): string {
  if (/^rediss?:\/\//.test(url)) return tls ? url.replace(/^redis:/, 'rediss:') : url;
  if (!HOST_PORT.test(url)) throw new ConfigError('REDIS_URL', undefined, undefined, 'must be host:port (or a redis:// URL)');
  return `${tls ? 'rediss' : 'redis'}://${url}`;
}

/**
 * The section as the store's connection fields take it: `url` (a `host:port`
 * made a redis:// or rediss:// URL) or `cluster` seeds or `sentinel`, with the
 * ACL user, the password and the TLS files beside them, for every node alike.
 * Only REDIS_TLS_SKIP_HOSTNAME_VERIFICATION is refused: no store option checks
 * the certificate's chain but not its name, and skipping both would connect
 * with less security than asked.
 */
export function storeSectionOf({ section, unmapped }: ReferenceStore): StoreSection | undefined {
  if (!section) return undefined;
  if (unmapped[0]) {
    throw new ConfigError(unmapped[0], undefined, undefined, "skipping only the hostname check is not offered: give REDIS_TLS_CACERT (the CA that signed the server's certificate) and, if the certificate names another host, SLUICE_REDIS_TLS_SERVERNAME");
  }
  return section;
}
