// Membership: the live instance count follows engines starting and stopping,
// and SLUICE_INSTANCES (option `instances`) overrides it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { ResilientEngine } from '../../src/limiter/engine/resilient-engine.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { eventually, resilientEngine } from '../helpers/resilient-engine.js';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis.stop();
});

test('the instance count follows engines starting and stopping', async () => {
  const clients = [redis.client(), redis.client(), redis.client()];
  const start = (i: number) => resilientEngine({ redis: clients[i]!, heartbeatMs: 50, memberTtlMs: 300, instanceId: `member-${i}` });
  const engines: ResilientEngine[] = [start(0), start(1)];
  try {
    await eventually(() => engines.every((e) => e.instances === 2), 5000, 'two instances');
    engines.push(start(2));
    await eventually(() => engines.every((e) => e.instances === 3), 5000, 'three instances');
    await engines.pop()!.close();
    await eventually(() => engines.every((e) => e.instances === 2), 5000, 'back to two after a clean stop');
    // A crashed instance (no goodbye) drops out once its heartbeat is older than the TTL.
    const crashed = redis.client();
    await crashed.zadd('sluice:{meta}:instances', Date.now(), 'crashed');
    crashed.disconnect();
    await eventually(() => engines.every((e) => e.instances === 2), 5000, 'the silent member expired');
    assert.equal(engines[0]!.health().detail, 'instances=2');
  } finally {
    await Promise.all(engines.map((e) => e.close()));
    for (const client of clients) client.disconnect();
  }
});

test('option instances (SLUICE_INSTANCES) overrides the live count', async () => {
  const client = redis.client();
  const engine = resilientEngine({ redis: client, instances: 5, heartbeatMs: 50, memberTtlMs: 300 });
  try {
    await engine.membership.beat();
    assert.ok(engine.membership.count < 5, 'the live count differs');
    assert.equal(engine.instances, 5);
  } finally {
    await engine.close();
    client.disconnect();
  }
});
