// What a failover costs, bounded, on a Redis Cluster (6 nodes; the master
// serving the quota's slot killed, its replica promoted): the scenario of
// failover-scenario.ts, as failover-bound.test.ts runs it on Sentinel.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bucketKey } from '../../src/core/ids.js';
import { type RedisCluster, startRedisCluster } from '../helpers/redis-cluster.js';
import { replicaOf } from '../helpers/replication-hold.js';
import { BOUND, clusterFailover, QUOTA, quotaAcrossFailover } from './failover-scenario.js';

const TENANT = 'quota-cfo';
let cluster: RedisCluster;
before(async () => {
  cluster = await startRedisCluster();
});
after(async () => {
  await cluster?.stop();
});

test('a quota across a Cluster failover that loses the last writes: two instances admit at most the quota plus the lost writes, within a tenth of what was left', async () => {
  const master = await cluster.masterFor(bucketKey(TENANT, 'orders').key);
  const replica = await replicaOf(master);
  const outcome = await quotaAcrossFailover(
    { ...clusterFailover(cluster, master, replica), client: () => cluster.client() },
    TENANT,
  );
  assert.ok(outcome.admitted <= BOUND, `admitted ${outcome.admitted} of a quota of ${QUOTA} (bound ${BOUND}); lost writes restored: ${outcome.restored}`);
  assert.ok(outcome.fallbackAdmitted > 0, 'the fallback admitted during the failover');
});
