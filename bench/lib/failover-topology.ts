// The two Redis topologies bench:failover fails over, behind one face: the
// clients the instances decide through, the replica that will be promoted
// (to be paused, making it lag), the kill and the wait for the promotion.
import { Redis } from 'ioredis';
import { bucketKey } from '../../src/core/ids.js';
import { connectRedis } from '../../src/stores/redis/connect.js';
import type { RedisClient } from '../../src/stores/redis/scripts.js';
import { startRedisCluster } from '../../test/helpers/redis-cluster.js';
import { MASTER_NAME, startSentinels } from '../../test/helpers/redis-sentinel.js';
import { onCleanup } from './cleanup.js';

export type TopologyName = 'cluster' | 'sentinel';

export interface Topology {
  /** Where the failover happens, for the report. */
  readonly master: number;
  readonly replica: number;
  client(): RedisClient;
  pauseReplica(): void;
  resumeReplica(): void;
  killMaster(): Promise<void>;
  waitForPromotion(): Promise<void>;
  stop(): Promise<void>;
}

/** `key`: the bucket whose master is killed (on a cluster, the master of its slot). */
export async function startTopology(name: TopologyName, key = bucketKey('failover', 'orders').key): Promise<Topology> {
  return name === 'cluster' ? clusterTopology(key) : sentinelTopology();
}

async function clusterTopology(key: string): Promise<Topology> {
  const cluster = await startRedisCluster();
  const release = onCleanup(() => cluster.stop());
  const master = await cluster.masterFor(key);
  const replica = await replicaOf(master);
  return {
    master,
    replica,
    client: () => cluster.client(),
    pauseReplica: () => cluster.pauseNode(replica),
    resumeReplica: () => cluster.resumeNode(replica),
    killMaster: () => cluster.killNode(master),
    waitForPromotion: () => cluster.waitForFailover(master),
    stop: release,
  };
}

async function sentinelTopology(): Promise<Topology> {
  const setup = await startSentinels();
  const release = onCleanup(() => setup.stop());
  return {
    master: setup.master.port,
    replica: setup.replica.port,
    client: () => connectRedis({ sentinel: { name: MASTER_NAME, sentinels: setup.sentinels } }),
    pauseReplica: () => setup.replica.pause(),
    resumeReplica: () => setup.replica.resume(),
    killMaster: () => setup.master.kill(),
    waitForPromotion: async () => {
      await setup.waitForPromotion(setup.master.port);
    },
    stop: release,
  };
}

/** The port of a master's replica, from its INFO replication. */
async function replicaOf(masterPort: number): Promise<number> {
  const client = new Redis({ host: '127.0.0.1', port: masterPort });
  try {
    const port = /slave0:[^\r\n]*port=(\d+)/.exec(await client.info('replication'))?.[1];
    if (!port) throw new Error(`master ${masterPort} has no replica`);
    return Number(port);
  } finally {
    client.disconnect();
  }
}
