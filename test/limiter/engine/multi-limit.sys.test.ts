// Several limits per request through decideAll on real Redis and on the 6-node
// cluster: 1,000 concurrent requests admitted by every limit at most, and every
// bucket afterwards holding exactly the admitted requests' units (refused ones
// drained nothing). Same-slot limits cost one store call; Redis killed, the
// fallback decides all or nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Cluster, Redis } from 'ioredis';
import { derivedId } from '../../../src/core/ids.js';
import { parseRule } from '../../../src/policies/rule.js';
import type { LimitCall } from '../../../src/limiter/engine/engine.js';
import type { ResilientEngine } from '../../../src/limiter/engine/resilient-engine.js';
import { type RedisCluster, startRedisCluster } from '../../helpers/redis-cluster.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { bucket, eventually, resilientEngine } from '../../helpers/resilient-engine.js';

// Refill of one unit per 1,000 s: the counts cannot blur while the test runs.
const slow = (capacity: number) => bucket(capacity, 0.001);
const daily = (limit: number) => parseRule({ policy: 'fixed_window', limit, windowMs: 86_400_000 });

async function remaining(engine: ResilientEngine, call: LimitCall): Promise<number> {
  return (await engine.inspect(call.bucket, call.rule)).decision.remaining;
}

/** 1,000 concurrent requests of `calls`: admitted ≤ every capacity, buckets exact. */
async function thousand(engine: ResilientEngine, calls: LimitCall[], capacities: number[]): Promise<number> {
  const outcomes = await Promise.all(Array.from({ length: 1000 }, () => engine.decideAll(calls)));
  const admitted = outcomes.filter((outcome) => outcome.allowed).length;
  assert.ok(admitted > 0 && admitted <= Math.min(...capacities), `${admitted} admitted`);
  for (const [i, call] of calls.entries()) {
    assert.equal(await remaining(engine, call), capacities[i]! - admitted, `limit ${call.bucket.name} holds exactly the admitted requests' units`);
  }
  for (const outcome of outcomes) {
    if (!outcome.allowed) assert.ok(outcome.decisions.some((d) => !d.allowed), 'a refused request names its refusing limit');
  }
  return admitted;
}

function suite(name: string, client: () => Redis | Cluster) {
  describe(`decideAll: 1,000 concurrent requests (${name})`, () => {
    let engine: ResilientEngine;
    before(() => {
      engine = resilientEngine({ redis: client(), deadlineMs: 2000 });
    });
    after(() => engine.close());

    it('two limits of one tenant (one slot): admitted = the smaller capacity, both buckets exact', async () => {
      const calls: LimitCall[] = [
        { bucket: { tag: `t-${name}`, name: 'burst' }, rule: slow(300), cost: 1 },
        { bucket: { tag: `t-${name}`, name: 'quota' }, rule: daily(200), cost: 1 },
      ];
      assert.equal(await thousand(engine, calls, [300, 200]), 200);
    });

    it('a tenant limit and an IP limit (two slots, reserve and refund): never over, both buckets exact after the refunds', async () => {
      const calls: LimitCall[] = [
        { bucket: { tag: `u-${name}`, name: 'per-tenant' }, rule: slow(150), cost: 1 },
        { bucket: { tag: derivedId('ip.', '203.0.113.7'), name: `per-ip-${name}` }, rule: daily(100), cost: 1 },
      ];
      await thousand(engine, calls, [150, 100]);
    });
  });
}

describe('several limits on real Redis', () => {
  let redis: RedisServer;
  const clients: Redis[] = [];
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    for (const client of clients) client.disconnect();
    await redis.stop();
  });
  const client = () => {
    const made = redis.client();
    made.on('error', () => undefined);
    clients.push(made);
    return made;
  };

  suite('standalone', client);

  it('two limits of one slot are ONE store call (one EVALSHA); two slots are two', async () => {
    const counter = client();
    const engine = resilientEngine({ redis: client(), deadlineMs: 2000 });
    try {
      const evalshaCalls = async () => Number(/cmdstat_evalsha:calls=(\d+)/.exec(await counter.info('commandstats'))?.[1] ?? 0);
      const same: LimitCall[] = [
        { bucket: { tag: 'one-call', name: 'a' }, rule: slow(10), cost: 1 },
        { bucket: { tag: 'one-call', name: 'b' }, rule: daily(10), cost: 1 },
      ];
      const cross: LimitCall[] = [same[0]!, { bucket: { tag: derivedId('ip.', '198.51.100.1'), name: 'c' }, rule: daily(10), cost: 1 }];
      await engine.decideAll(same); // the first call may load the script (EVAL after NOSCRIPT)
      const [calls0, sha0] = [engine.counters().storeCalls, await evalshaCalls()];
      assert.equal((await engine.decideAll(same)).allowed, true);
      assert.equal(engine.counters().storeCalls - calls0, 1);
      assert.equal((await evalshaCalls()) - sha0, 1);
      const [calls1, sha1] = [engine.counters().storeCalls, await evalshaCalls()];
      assert.equal((await engine.decideAll(cross)).allowed, true);
      assert.equal(engine.counters().storeCalls - calls1, 2);
      assert.equal((await evalshaCalls()) - sha1, 2);
    } finally {
      await engine.close();
    }
  });
});

describe('several limits on the 6-node cluster', () => {
  let cluster: RedisCluster;
  const clients: Cluster[] = [];
  before(async () => {
    cluster = await startRedisCluster();
  });
  after(async () => {
    for (const client of clients) client.disconnect();
    await cluster.stop();
  });
  suite('cluster', () => {
    const made = cluster.client();
    clients.push(made);
    return made;
  });
});

describe('several limits with Redis killed', () => {
  let redis: RedisServer;
  let client: Redis;
  let engine: ResilientEngine;
  before(async () => {
    redis = await startRedis();
    client = redis.client();
    client.on('error', () => undefined);
    engine = resilientEngine({ redis: client, deadlineMs: 5, instances: 1, breaker: { resetTimeoutMs: 60_000 } });
    // Connected first: a client that never connected reads as down at once (health), before its breaker opens.
    await client.ping();
    await redis.kill();
    await eventually(async () => {
      await engine.decideAll([{ bucket: { tag: 'trip', name: 'trip' }, rule: slow(5), cost: 1 }]);
      return engine.health().mode === 'fallback';
    }, 10_000, 'breaker open');
  });
  after(async () => {
    await engine.close();
    client.disconnect();
    await redis.stop();
  });

  it('the local fallback decides all or nothing: a request refused by one limit takes nothing from the other', async () => {
    const calls: LimitCall[] = [
      { bucket: { tag: 'down', name: 'big' }, rule: slow(5), cost: 1 },
      { bucket: { tag: 'down', name: 'small' }, rule: slow(3), cost: 1 },
    ];
    const outcomes = [];
    for (let i = 0; i < 6; i++) outcomes.push(await engine.decideAll(calls));
    assert.deepEqual(outcomes.map((o) => o.allowed), [true, true, true, false, false, false]);
    assert.ok(outcomes.every((o) => o.decisions.every((d) => d.source === 'fallback')));
    assert.equal(outcomes[3]!.governing, 1, 'the small limit refused');
    assert.equal(await remaining(engine, calls[0]!), 2, 'the big limit was charged for the 3 admitted requests only');
  });

  it('onStoreDown closed refuses the request (503 semantics) and charges the fallback limit nothing', async () => {
    const local: LimitCall = { bucket: { tag: 'mixed', name: 'local' }, rule: slow(5), cost: 1 };
    const closed: LimitCall = { bucket: { tag: derivedId('ip.', '192.0.2.9'), name: 'closed' }, rule: bucket(5, 0.001, { onStoreDown: 'closed' }), cost: 1 };
    const outcome = await engine.decideAll([local, closed]);
    assert.equal(outcome.allowed, false);
    assert.equal(outcome.decisions[outcome.governing]!.source, 'closed');
    assert.equal(await remaining(engine, local), 5);
    const open: LimitCall = { ...closed, bucket: { ...closed.bucket, name: 'open' }, rule: bucket(5, 0.001, { onStoreDown: 'open' }) };
    const admitted = await engine.decideAll([local, open]);
    assert.equal(admitted.allowed, true);
    assert.equal(await remaining(engine, local), 4);
  });
});
