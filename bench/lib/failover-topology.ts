// The two Redis topologies bench:failover fails over, behind one face: the
// clients the instances decide through, the replica that will be promoted
// (to be paused, making it lag), the kill and the wait for the promotion.
// The lag is made with test/helpers/replication-hold.ts: writes lost for real.
import { Redis } from 'ioredis';
import { bucketKey } from '../../src/core/ids.js';
import { connectRedis } from '../../src/stores/redis/connect.js';
import type { RedisClient } from '../../src/stores/redis/scripts.js';
import { startRedisCluster } from '../../test/helpers/redis-cluster.js';
import { holdReplication, replicaOf } from '../../test/helpers/replication-hold.js';
import { MASTER_NAME, startSentinels } from '../../test/helpers/redis-sentinel.js';
import { onCleanup } from './cleanup.js';

export type TopologyName = 'cluster' | 'sentinel';

export interface Topology {
  /** Where the failover happens, for the report. */
  readonly master: number;
  readonly replica: number;
  client(): RedisClient;
  /** Pauses the replica and fills its link: what the master acknowledges from now on is lost with it. */
  holdReplication(): Promise<void>;
  resumeReplica(): void;
  killMaster(): Promise<void>;
  /** ZCARD of `key` on the master or the replica (a sliding log's entries), read on that node itself. */
  entriesOn(node: 'master' | 'replica', key: string): Promise<number>;
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
    holdReplication: () => holdReplication(master, () => cluster.pauseNode(replica)),
    resumeReplica: () => cluster.resumeNode(replica),
    killMaster: () => cluster.killNode(master),
    entriesOn: (node, key) => entriesOn(node === 'master' ? master : replica, key),
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
    holdReplication: () => holdReplication(setup.master.port, () => setup.replica.pause()),
    resumeReplica: () => setup.replica.resume(),
    killMaster: () => setup.master.kill(),
    entriesOn: (node, key) => entriesOn(node === 'master' ? setup.master.port : setup.replica.port, key),
    waitForPromotion: async () => {
      await setup.waitForPromotion(setup.master.port);
    },
    stop: release,
  };
}

async function entriesOn(port: number, key: string): Promise<number> {
  const client = new Redis({ host: '127.0.0.1', port });
  try {
    await client.call('READONLY').catch(() => undefined); // a cluster replica answers reads only after it; Sentinel's refuses it
    return await client.zcard(key).catch(() => Number.NaN); // CLUSTERDOWN while the cluster fails over: not known
  } finally {
    client.disconnect();
  }
}
