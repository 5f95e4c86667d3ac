// A connected Redis: one node (or a Sentinel-managed primary) or a Cluster.
// Told apart without ioredis's classes: ioredis is loaded only when a client
// is made (core/load-package.ts).
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

export function isCluster(client: RedisClient): client is Cluster {
  return client.isCluster;
}
