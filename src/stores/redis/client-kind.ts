// Which kind of ioredis client this is, without loading ioredis for an
// `instanceof` (it is loaded when a client is made: load-package.ts).
import type { Cluster, Redis } from 'ioredis';

export function isCluster(client: Redis | Cluster): client is Cluster {
  return client.isCluster;
}
