// The Redis the config's store section names, as connectRedis takes it: one
// mapping for the engine, the dashboard, the primary and `sluice check --connect`.
import type { ListenAddress, StoreConfig, TlsFiles } from './types.js';
import type { RedisTarget, RedisTls } from '../stores/redis/connect.js';

/** undefined with the memory store. */
export function redisTargetOf(store: StoreConfig): RedisTarget | undefined {
  if (store.type !== 'redis') return undefined;
  const { sentinel } = store;
  return {
    ...(store.cluster ? { cluster: store.cluster.map(seed) } : sentinel ? {} : { url: store.url! }),
    ...(sentinel
      ? { sentinel: { name: sentinel.name, sentinels: sentinel.sentinels.map(seed), ...credentials(sentinel), ...(sentinel.tls ? { tls: tlsOf(sentinel.tls) } : {}) } }
      : {}),
    ...credentials(store),
    ...(store.tls ? { tls: tlsOf(store.tls) } : {}),
  };
}

const seed = ({ host, port }: ListenAddress) => `${host}:${port}`;

function credentials(from: { username: string | undefined; password: string | undefined }): { username?: string; password?: string } {
  return { ...(from.username !== undefined ? { username: from.username } : {}), ...(from.password !== undefined ? { password: from.password } : {}) };
}

function tlsOf(files: TlsFiles): RedisTls {
  const tls: RedisTls = { rejectUnauthorized: files.rejectUnauthorized };
  if (files.ca !== undefined) tls.ca = files.ca;
  if (files.cert !== undefined) tls.cert = files.cert;
  if (files.key !== undefined) tls.key = files.key;
  if (files.servername !== undefined) tls.servername = files.servername;
  return tls;
}
