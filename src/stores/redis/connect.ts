// Opens the ioredis client for a RedisStore from what the config or env says:
// one URL (standalone, or a `redis+sentinel`-free URL), or cluster seed nodes.
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { RedisClient } from './scripts.js';

export interface RedisTarget {
  url?: string;
  /** `host:port` seed nodes of a Redis Cluster. */
  cluster?: string[];
  /** Sentinel: the master's name and `host:port` sentinels. */
  sentinel?: { name: string; sentinels: string[] };
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

export function connectRedis(target: RedisTarget): RedisClient {
  if (target.cluster && target.cluster.length > 0) {
    return new Cluster(target.cluster.map(hostPort), {
      redisOptions: common,
      clusterRetryStrategy: (attempt) => Math.min(100 * attempt, 1000),
      enableOfflineQueue: true,
      slotsRefreshTimeout: 2000,
    });
  }
  if (target.sentinel) {
    return new Redis({ ...common, name: target.sentinel.name, sentinels: target.sentinel.sentinels.map(hostPort) });
  }
  return new Redis(target.url ?? 'redis://127.0.0.1:6379', common);
}
