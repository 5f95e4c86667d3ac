// A Redis Cluster whose every node holds the documented ACL user: the store
// reaches every master as that user (slot discovery, scripts on each slot,
// bucket inspection), and a refused password is named.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { checkConnections } from '../../../src/cli/check-connect.js';
import { bucketKey } from '../../../src/core/ids.js';
import { parseRule } from '../../../src/policies/rule.js';
import { redisTargetOf } from '../../../src/config/redis-target.js';
import { connectRedis } from '../../../src/stores/redis/connect.js';
import { RedisStore } from '../../../src/stores/redis-store.js';
import { type RedisCluster, startRedisCluster } from '../../helpers/redis-cluster.js';
import { configIn, documentedAcl, ROUTES } from '../../helpers/connections.js';

const PASSWORD = 'cluster-secret-a81f';

describe('Redis Cluster with the documented ACL user on every node', () => {
  let cluster: RedisCluster;
  let nodes: Redis[];
  let dir: string;
  const config = (passwordFile: string) =>
    configIn(dir, `${ROUTES}store:\n  cluster: [${cluster.seeds.map(({ host, port }) => `"${host}:${port}"`).join(', ')}]\n  username: sluice\n  passwordFile: ${passwordFile}\n`);

  before(async () => {
    cluster = await startRedisCluster();
    nodes = cluster.nodes.map(({ port }) => new Redis({ port, host: '127.0.0.1' }));
    for (const node of nodes) {
      await node.call('ACL', ...documentedAcl(PASSWORD));
      await node.call('ACL', 'LOG', 'RESET');
    }
    dir = mkdtempSync(join(tmpdir(), 'sluice-cluster-acl-'));
    writeFileSync(join(dir, 'password'), `${PASSWORD}\n`);
    writeFileSync(join(dir, 'wrong-password'), 'not-it\n');
  });
  after(async () => {
    for (const node of nodes ?? []) node.disconnect();
    await cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('decisions on buckets of every master, and their inspection, pass the ACL of every node', async () => {
    const store = new RedisStore(connectRedis(redisTargetOf(config('password').store)!));
    const rule = parseRule({ policy: 'sliding_window_counter', limit: 2, windowMs: 60_000 });
    const tenants = Array.from({ length: 12 }, (_, i) => `cluster-acl-${i}`);
    const masters = new Set<number>();
    try {
      for (const tenant of tenants) {
        const key = bucketKey(tenant, 'orders');
        const allowed = [await store.consume(key, rule, 1), await store.consume(key, rule, 1), await store.consume(key, rule, 1)].map((d) => d.allowed);
        assert.deepEqual(allowed, [true, true, false], tenant);
        assert.match((await store.inspect(key, rule)).location, /^redis cluster slot \d+$/);
        masters.add(await cluster.masterFor(`rl:{${tenant}}`));
      }
    } finally {
      await store.close();
    }
    assert.equal(masters.size, 3, 'the tenants spread over the three masters');
    for (const node of nodes) assert.deepEqual(await node.call('ACL', 'LOG'), [], 'no node refused the ACL user anything');
  });

  it('check --connect names a refused password for the cluster, never the password', async () => {
    const [ok] = await checkConnections(config('password'), 5000);
    assert.equal(ok!.problem, undefined);
    const [refused] = await checkConnections(config('wrong-password'), 5000);
    assert.match(refused!.problem ?? '', /^authentication refused \(WRONGPASS\)/);
    assert.ok(!JSON.stringify(refused).includes(PASSWORD));
  });

  it('check --connect names an ACL without CLUSTER INFO (the cluster client would only reconnect, silently)', async () => {
    for (const node of nodes) await node.call('ACL', 'SETUSER', 'narrow', 'on', `>${PASSWORD}`, '~rl:*', '-@all', '+info', '+cluster|slots', '+client|setname', '+evalsha');
    const yaml = `${ROUTES}store:\n  cluster: ["${cluster.seeds[0]!.host}:${cluster.seeds[0]!.port}"]\n  username: narrow\n  passwordFile: password\n`;
    const [refused] = await checkConnections(configIn(dir, yaml), 3000);
    assert.match(refused!.problem ?? '', /^the ACL user may not do what Sluice needs \(NOPERM .*cluster\|info.*\); grant the ACL of docs\/redis\.md/);
  });
});
