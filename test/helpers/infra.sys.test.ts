// Proves the real-server helpers: a Redis Cluster survives losing a master, and a private
// PostgreSQL keeps its data across a kill and restart.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { type PostgresServer, startPostgres } from './postgres.js';
import { type RedisCluster, startRedisCluster } from './redis-cluster.js';

describe('redis cluster helper', () => {
  let cluster: RedisCluster;
  before(async () => {
    cluster = await startRedisCluster();
  });
  after(async () => {
    await cluster?.stop();
  });

  it('starts 3 masters and 3 replicas', () => {
    assert.equal(cluster.nodes.length, 6);
    assert.equal(cluster.nodes.filter((n) => n.role === 'master').length, 3);
    assert.equal(cluster.nodes.filter((n) => n.role === 'replica').length, 3);
    assert.equal(cluster.seeds.length, 6);
  });

  it('keeps serving writes after a master is killed', async () => {
    const client = cluster.client();
    try {
      // Keys spread over the slots until every master holds at least one.
      const keyOf = new Map<number, string>();
      for (let i = 0; keyOf.size < 3 && i < 1000; i++) {
        const key = `infra:${i}`;
        const master = await cluster.masterFor(key);
        if (!keyOf.has(master)) keyOf.set(master, key);
      }
      assert.equal(keyOf.size, 3, 'keys landed on all three masters');
      for (const key of keyOf.values()) assert.equal(await client.set(key, 'before'), 'OK');

      const [victim, victimKey] = [...keyOf.entries()][0]!;
      await cluster.killNode(victim);
      await cluster.waitForFailover(victim);

      const newMaster = await cluster.masterFor(victimKey);
      assert.notEqual(newMaster, victim);
      assert.equal(cluster.nodes.find((n) => n.port === newMaster)?.role, 'master');
      assert.equal(cluster.nodes.filter((n) => n.alive && n.role === 'master').length, 3);

      for (const key of keyOf.values()) {
        assert.equal(await client.set(key, 'after'), 'OK');
        assert.equal(await client.get(key), 'after');
      }
    } finally {
      client.disconnect();
    }
  });
});

describe('postgres helper', () => {
  let server: PostgresServer;
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await server?.stop();
  });

  const query = async (sql: string) => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      return await client.query(sql);
    } finally {
      await client.end();
    }
  };

  it('answers select 1 on its own database', async () => {
    const result = await query('select 1 as one');
    assert.deepEqual(result.rows, [{ one: 1 }]);
    assert.match(server.url, new RegExp(`:${server.port}/sluice$`));
  });

  it('keeps table data across a restart and refuses connections while killed', async () => {
    await query('create table kept (n int)');
    await query('insert into kept values (1), (2), (3)');

    await server.kill();
    await assert.rejects(query('select 1'));
    await server.start();
    assert.deepEqual((await query('select count(*)::int as n from kept')).rows, [{ n: 3 }]);

    await server.restart();
    assert.deepEqual((await query('select sum(n)::int as s from kept')).rows, [{ s: 6 }]);
  });
});
