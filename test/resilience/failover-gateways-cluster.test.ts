// What a Cluster failover costs through two real gateways over HTTP (6
// nodes; the master serving the quota's slot killed, its replica promoted):
// the scenario of gateway-failover-scenario.ts, as failover-gateways.test.ts
// runs it on Sentinel.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ROUTE_TAG } from '../../src/core/ids.js';
import { type RedisCluster, startRedisCluster } from '../helpers/redis-cluster.js';
import { replicaOf } from '../helpers/replication-hold.js';
import { BOUND, QUOTA } from './failover-scenario.js';
import { quotaThroughGateways } from './gateway-failover-scenario.js';

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
    storeYaml: `{ cluster: [${cluster.seeds.map(({ host, port }) => `'${host}:${port}'`).join(', ')}] }`,
    masterPort: master,
    hashTag: ROUTE_TAG,
    pauseReplica: () => cluster.pauseNode(replica),
    resumeReplica: () => cluster.resumeNode(replica),
    killMaster: () => cluster.killNode(master),
    waitForPromotion: () => cluster.waitForFailover(master),
  });
  t.diagnostic(JSON.stringify(outcome));
  assert.equal(outcome.admitted + outcome.refused, outcome.offered, 'every answer a 2xx or a 429');
  assert.ok(outcome.offered >= 2 * QUOTA, `${outcome.offered} requests offered, 2× the quota`);
  assert.ok(outcome.admitted <= BOUND, `admitted ${outcome.admitted} of a quota of ${QUOTA} (bound ${BOUND})`);
  assert.deepEqual(outcome.modes, ['redis', 'redis'], 'both gateways on Redis after the failover');
});
