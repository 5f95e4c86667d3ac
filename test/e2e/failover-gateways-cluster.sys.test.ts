// What a Cluster failover costs through two real gateways over HTTP (6
// nodes; the master serving the quota's slot killed, its replica promoted):
// the scenario of gateway-failover-scenario.ts, as failover-gateways.test.ts
// runs it on Sentinel.
import { after, before, test } from 'node:test';
import { ROUTE_TAG } from '../../src/core/ids.js';
import { type RedisCluster, startRedisCluster } from '../helpers/redis-cluster.js';
import { replicaOf } from '../helpers/replication-hold.js';
import { clusterFailover } from './failover-scenario.js';
import { assertWithinBound, quotaThroughGateways } from './gateway-failover-scenario.js';

let cluster: RedisCluster;
before(async () => {
  cluster = await startRedisCluster();
});
after(async () => {
  await cluster?.stop();
});

test('a quota across a Cluster failover through two gateways over HTTP: 2xx within the quota plus the lost writes plus the margin, both back on Redis', async (t) => {
  // A route-keyed limit's bucket is in the slot of the route tag.
  const master = await cluster.masterFor(`rl:{${ROUTE_TAG}}`);
  const replica = await replicaOf(master);
  const outcome = await quotaThroughGateways({
    ...clusterFailover(cluster, master, replica),
    storeYaml: `{ cluster: [${cluster.seeds.map(({ host, port }) => `'${host}:${port}'`).join(', ')}] }`,
    hashTag: ROUTE_TAG,
  });
  t.diagnostic(JSON.stringify(outcome));
  assertWithinBound(outcome);
});
