// A connected Redis: one node (or a Sentinel-managed primary) or a Cluster.
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;
