// Opens the ioredis client for a RedisStore from what the config or env says:
// one URL (standalone), cluster seed nodes, or Sentinel; each with an optional
// ACL user and password and TLS (the same for every node of a cluster).
import type { ConnectionOptions } from 'node:tls';
import type * as IORedis from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { loadPackage } from '../../core/load-package.js';
import type { RedisClient } from './client.js';
import { scrubErrorsOf } from './scrub-secrets.js';

/** An ACL user (or `default`) and its password. */
export interface RedisCredentials {
  username?: string;
  password?: string;
}

/** TLS to Redis: PEM text of the CA, client certificate and key; the name checked; whether an unknown certificate is refused (default yes). */
export type RedisTls = Pick<ConnectionOptions, 'ca' | 'cert' | 'key' | 'servername' | 'rejectUnauthorized'>;

export interface RedisTarget extends RedisCredentials {
  url?: string;
  /** `host:port` seed nodes of a Redis Cluster. */
  cluster?: string[];
  /** Sentinel: the master's name and `host:port` sentinels, with the sentinels' own credentials and TLS. */
  sentinel?: { name: string; sentinels: string[]; tls?: RedisTls } & RedisCredentials;
  /** TLS to the data nodes (a `rediss://` URL turns it on with the system's CAs). */
  tls?: RedisTls;
}

const common: RedisOptions = {
  // Fail fast: the resilience layer decides what to do while Redis is away,
  // so commands are not queued for minutes behind a dead connection.
  maxRetriesPerRequest: 1,
  enableOfflineQueue: true,
  connectTimeout: 2000,
  retryStrategy: (attempt) => Math.min(50 * attempt, 1000),
};

function hostPort(seed: string): { host: string; port: number } {
  const at = seed.lastIndexOf(':');
  return { host: seed.slice(0, at) || '127.0.0.1', port: Number(seed.slice(at + 1)) };
}

/** The data nodes' user, password and TLS as ioredis options, absent ones left out (a URL's own then apply). */
function nodeOptions(target: RedisTarget): RedisOptions {
  return {
    ...common,
    ...(target.username !== undefined ? { username: target.username } : {}),
    ...(target.password !== undefined ? { password: target.password } : {}),
    ...(target.tls ? { tls: target.tls } : {}),
  };
}

export function connectRedis(target: RedisTarget): RedisClient {
  const client = openClient(target);
  scrubErrorsOf(client);
  return client;
}

function openClient(target: RedisTarget): RedisClient {
  const { Cluster, Redis } = loadPackage<typeof IORedis>('ioredis');
  if (target.cluster && target.cluster.length > 0) {
    return new Cluster(target.cluster.map(hostPort), {
      redisOptions: nodeOptions(target),
      clusterRetryStrategy: (attempt) => Math.min(100 * attempt, 1000),
      enableOfflineQueue: true,
      slotsRefreshTimeout: 2000,
    });
  }
  if (target.sentinel) {
    const { name, sentinels, username, password, tls } = target.sentinel;
    return new Redis({
      ...nodeOptions(target),
      name,
      sentinels: sentinels.map(hostPort),
      ...(username !== undefined ? { sentinelUsername: username } : {}),
      ...(password !== undefined ? { sentinelPassword: password } : {}),
      ...(tls ? { sentinelTLS: tls } : {}),
      // The master and replicas the sentinels name are reached with store.tls.
      enableTLSForSentinelMode: target.tls !== undefined,
    });
  }
  // The URL's own user and password (the config refuses both places at once).
  return new Redis(target.url ?? 'redis://127.0.0.1:6379', nodeOptions(target));
}
