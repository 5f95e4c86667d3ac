// RedisStore on a real 6-node Redis Cluster (3 masters, 3 replicas) started for
// this file: the same suite as standalone, plus CROSSSLOT and failover.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bucketKey, shardKey } from '../../src/core/ids.js';
import { parseRule, POLICIES } from '../../src/policies/rule.js';
import { RedisStore } from '../../src/stores/redis-store.js';
import { type RedisCluster, startRedisCluster } from '../helpers/redis-cluster.js';
import { CAPACITY_200 } from './capacity-200-rules.js';
import { storeSuite } from './store-suite.js';

describe('RedisStore (6-node cluster)', () => {
  let cluster: RedisCluster;
  let store: RedisStore;

  before(async () => {
    cluster = await startRedisCluster();
    store = new RedisStore(cluster.client());
  });
  after(async () => {
    await store.close();
    await cluster.stop();
  });

  storeSuite(() => store);

  it('CROSSSLOT: every policy script touches one slot, for tenants spread over all three masters', async () => {
    const masters = new Set<number>();
    for (let t = 0; t < 30; t++) {
      masters.add(await cluster.masterFor(bucketKey(`tenant-${t}`, 'create-order').key));
      for (const policy of POLICIES) {
        const decision = await store.consume(bucketKey(`tenant-${t}`, policy.replaceAll('_', '-')), CAPACITY_200[policy], 1);
        assert.equal(decision.allowed, true);
      }
    }
    assert.equal(masters.size, 3, 'the tenants landed on every master');
  });

  it('sharded sub-buckets have no hash tag, so they spread over the nodes', async () => {
    const masters = new Set<number>();
    for (let i = 0; i < 16; i++) masters.add(await cluster.masterFor(shardKey('big-tenant', 'search', i).key));
    assert.ok(masters.size >= 2, `16 shards on ${masters.size} master(s)`);
  });

  it('a master killed, its replica promoted: decisions resume on the new master', async () => {
    const rule = parseRule({ policy: 'token_bucket', capacity: 100, refillPerSecond: 0.001 });
    const key = bucketKey('failover', 'route');
    assert.equal((await store.consume(key, rule, 10)).remaining, 90);
    const master = await cluster.masterFor(key.key);
    await cluster.killNode(master);
    await cluster.waitForFailover(master);
    let decision: Awaited<ReturnType<RedisStore['consume']>> | undefined;
    for (let i = 0; i < 100 && !decision; i++) {
      decision = await store.consume(key, rule, 1).catch(() => undefined);
      if (!decision) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(decision?.allowed, 'decides again on the promoted replica');
    assert.notEqual(await cluster.masterFor(key.key), master);
  });
});
