// Opt-in WAIT (store.wait) on a real master and replica (Sentinel: one
// master, one replica, three sentinels). A replica that does not acknowledge
// within the timeout leaves the admission standing and counted; a master
// killed while admissions wait for their replica takes them with it (the
// fallback decides them and charges them to the promoted master), so every
// admission Redis acknowledged is on the promoted master.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Decision } from '../../../src/core/decision.js';
import { bucketKey } from '../../../src/core/ids.js';
import { parseRule } from '../../../src/policies/rule.js';
import { resilienceRegistry } from '../../../src/metrics/registry.js';
import type { ResilientEngine } from '../../../src/limiter/engine/resilient-engine.js';
import { connectRedis } from '../../../src/stores/redis/connect.js';
import type { RedisStore } from '../../../src/stores/redis-store.js';
import { MASTER_NAME, type SentinelSetup, startSentinels } from '../../helpers/redis-sentinel.js';
import { holdReplication } from '../../helpers/replication-hold.js';
import { eventually, resilientEngine } from '../../helpers/resilient-engine.js';

const QUOTA = 600;
const rule = parseRule({ policy: 'sliding_window_log', limit: QUOTA, windowMs: 3_600_000 });

let setup: SentinelSetup;
/** The engines' clients: an engine does not own a client it was given, and a Sentinel client left open reconnects for ever. */
const clients: ReturnType<typeof connectRedis>[] = [];
before(async () => {
  setup = await startSentinels();
});
after(async () => {
  for (const client of clients) client.disconnect();
  await setup?.stop();
});

/** A deadline well past the WAIT timeout: on a busy machine a held master's replies are slow too. */
function engineWithWait(timeoutMs: number, deadlineMs = 2000): ResilientEngine {
  const redis = connectRedis({ sentinel: { name: MASTER_NAME, sentinels: setup.sentinels } });
  clients.push(redis);
  return resilientEngine({ redis, instances: 2, deadlineMs, replicaWait: { replicas: 1, timeoutMs }, hotKey: { autoLeaseRatePerSec: 0 } });
}

async function unreplicatedMetric(): Promise<number> {
  const text = await resilienceRegistry.getSingleMetricAsString('sluice_redis_wait_unreplicated_total');
  return Number(/^sluice_redis_wait_unreplicated_total (\d+)/m.exec(text)?.[1] ?? 0);
}

test('WAIT on, the replica held: the admissions stand and sluice_redis_wait_unreplicated_total counts each', async () => {
  const engine = engineWithWait(50);
  try {
    const waiter = (engine.store as RedisStore).waiter!;
    await eventually(async () => (await engine.decide({ tag: 'wait-held', name: 'orders' }, rule)).source === 'redis', 30_000, 'the engine on the master');
    assert.equal(waiter.unreplicated, 0, 'a healthy replica acknowledges');
    const before = await unreplicatedMetric();
    await holdReplication(setup.master.port, () => setup.replica.pause(), 'wait-held');
    const held: Decision[] = [];
    for (let i = 0; i < 10; i++) held.push(await engine.decide({ tag: 'wait-held', name: 'orders' }, rule));
    setup.replica.resume();
    assert.deepEqual(held.map((d) => [d.allowed, d.source]), held.map(() => [true, 'redis']), 'the decisions stand, decided by Redis');
    assert.equal(waiter.unreplicated, 10);
    assert.equal((await unreplicatedMetric()) - before, 10);
  } finally {
    await engine.close();
  }
});

test('WAIT on, the master killed while admissions wait for their replica: every admission Redis acknowledged is on the promoted master, and the quota holds exactly', async () => {
  const tenant = 'wait-fo';
  const engines = [engineWithWait(1500, 3000), engineWithWait(1500, 3000)];
  const decisions: { decision: Decision; beforeKill: boolean }[] = [];
  let killed = false;
  const spend = async (n: number) => {
    const batch = Array.from({ length: n }, (_, i) => engines[i % 2]!.decide({ tag: tenant, name: 'orders' }, rule).then((decision) => decisions.push({ decision, beforeKill: !killed })));
    await Promise.all(batch);
  };
  try {
    const replicaClient = setup.replica.client();
    await eventually(async () => /master_link_status:up/.test(await replicaClient.info('replication')), 30_000, 'the replica caught up after the first test');
    replicaClient.disconnect();
    await eventually(async () => (await Promise.all(engines.map((engine) => engine.peek({ tag: tenant, name: 'orders' }, rule)))).every((d) => d.source === 'redis'), 30_000, 'both engines on the master');
    for (let i = 0; i < 150; i++) await spend(2);
    const oldMaster = setup.master.port;
    await holdReplication(oldMaster, () => setup.replica.pause(), tenant);
    const waiting = spend(100); // each waits for a replica that does not acknowledge
    await sleep(200);
    killed = true;
    await setup.master.kill();
    setup.replica.resume();
    await sleep(300); // the replica reads what its socket still held
    const replica = setup.replica.client();
    const survived = await replica.zcard(bucketKey(tenant, 'orders').key);
    replica.disconnect();
    await waiting;
    const acknowledged = decisions.filter(({ decision, beforeKill }) => beforeKill && decision.allowed && decision.source === 'redis').length;
    assert.ok(acknowledged <= survived, `${acknowledged} admissions acknowledged by the old master, ${survived} on its replica`);
    await setup.waitForPromotion(oldMaster);
    while (decisions.length < 2 * QUOTA) await spend(2);
    const admitted = decisions.filter(({ decision }) => decision.allowed).length;
    assert.ok(admitted <= QUOTA, `admitted ${admitted} of a quota of ${QUOTA}`);
  } finally {
    await Promise.all(engines.map((engine) => engine.close()));
  }
});
