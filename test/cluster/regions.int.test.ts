// rebalanceShares is pure: shares move toward observed traffic, within bounds
// and steps, and always sum to 1. Then the task and the engine on real Redis:
// two regions, each with its own Redis.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RegionRebalancer } from '../../src/cluster/region-rebalancer.js';
import { DEFAULT_SHARE_BOUNDS, rebalanceShares } from '../../src/cluster/region-shares.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { allowedCount, bucket, burst, eventually, resilientEngine, silent } from '../helpers/resilient-engine.js';

const sum = (shares: Record<string, number>) => Object.values(shares).reduce((a, b) => a + b, 0);
const close = (a: number, b: number) => Math.abs(a - b) < 1e-6;

test('moves toward observed traffic by at most maxStep', () => {
  const next = rebalanceShares({ eu: 900, us: 100 }, { eu: 0.5, us: 0.5 }, { minShare: 0.05, maxShare: 0.95, maxStep: 0.1 });
  assert.ok(close(next.eu!, 0.6) && close(next.us!, 0.4), JSON.stringify(next));
});

test('reaches the traffic split when it is within one step, and sums to 1', () => {
  const next = rebalanceShares({ eu: 700, us: 300 }, { eu: 0.65, us: 0.35 }, DEFAULT_SHARE_BOUNDS);
  assert.ok(close(next.eu!, 0.7) && close(next.us!, 0.3), JSON.stringify(next));
  assert.ok(close(sum(next), 1));
});

test('never leaves [minShare, maxShare] even when all traffic is in one region', () => {
  let shares: Record<string, number> = { eu: 0.5, us: 0.5 };
  for (let i = 0; i < 20; i++) shares = rebalanceShares({ eu: 1000, us: 0 }, shares, { minShare: 0.1, maxShare: 0.9, maxStep: 0.2 });
  assert.ok(close(shares.eu!, 0.9) && close(shares.us!, 0.1), JSON.stringify(shares));
});

test('three regions: each step bounded, total 1', () => {
  const current = { ap: 0.2, eu: 0.4, us: 0.4 };
  const next = rebalanceShares({ ap: 0, eu: 100, us: 900 }, current, { minShare: 0.05, maxShare: 0.9, maxStep: 0.1 });
  for (const region of Object.keys(current)) assert.ok(Math.abs(next[region]! - current[region as keyof typeof current]) <= 0.1 + 1e-9);
  assert.ok(close(sum(next), 1));
  assert.ok(next.us! > current.us && next.ap! < current.ap);
});

test('no traffic keeps the current shares; a new region starts from an equal part', () => {
  assert.deepEqual(rebalanceShares({}, { eu: 0.7, us: 0.3 }), { eu: 0.7, us: 0.3 });
  const next = rebalanceShares({ eu: 50, us: 50, ap: 50 }, { eu: 0.5, us: 0.5 });
  assert.ok(close(sum(next), 1) && next.ap! > 0, JSON.stringify(next));
});

test('impossible bounds are a clear error', () => {
  assert.throws(() => rebalanceShares({ eu: 1, us: 1, ap: 1 }, {}, { minShare: 0.4, maxShare: 0.9, maxStep: 0.1 }), /cannot each hold/);
  assert.throws(() => rebalanceShares({ eu: 1 }, {}, { minShare: 0.5, maxShare: 0.4, maxStep: 0.1 }), /minShare/);
});

let eu: RedisServer;
let us: RedisServer;
before(async () => {
  [eu, us] = await Promise.all([startRedis(), startRedis()]);
});
after(async () => {
  await Promise.all([eu.stop(), us.stop()]);
});

test('a region enforces its share on its own Redis; the rebalancer publishes shares the instances pick up', async () => {
  const euClient = eu.client();
  const usClient = us.client();
  const euEngine = resilientEngine({ redis: euClient, region: 'eu', defaultRegionShare: 0.5, heartbeatMs: 50, memberTtlMs: 500 });
  const usEngine = resilientEngine({ redis: usClient, region: 'us', defaultRegionShare: 0.5, heartbeatMs: 50, memberTtlMs: 500 });
  try {
    // A rule's own regionShares wins over the default.
    const pinned = bucket(100, 1, { regionShares: { eu: 0.7, us: 0.3 } });
    assert.equal(allowedCount(await burst(euEngine, 200, pinned, 'pinned')), 70);
    assert.equal(allowedCount(await burst(usEngine, 200, pinned, 'pinned')), 30);

    const peers = { eu: eu.client(), us: us.client() };
    const rebalancer = new RegionRebalancer({
      regions: peers,
      ownedClients: Object.values(peers),
      bounds: { minShare: 0.1, maxShare: 0.9, maxStep: 0.2 },
      intervalMs: 60_000,
      logger: silent,
      initial: { eu: 0.5, us: 0.5 },
    });
    try {
      await euEngine.membership.beat();
      await usEngine.membership.beat();
      assert.equal(await rebalancer.runOnce(), undefined, 'the first round only takes a baseline');
      const rule = bucket(100, 1);
      await burst(euEngine, 400, rule, 'traffic');
      await burst(usEngine, 100, rule, 'traffic');
      await euEngine.membership.beat();
      await usEngine.membership.beat();
      const shares = await rebalancer.runOnce();
      assert.ok(shares && close(shares.eu!, 0.7) && close(shares.us!, 0.3), JSON.stringify(shares));
      await eventually(
        () => close(euEngine.membership.shares?.eu ?? 0, 0.7) && close(usEngine.membership.shares?.us ?? 0, 0.3),
        5000,
        'shares picked up',
      );
      assert.equal(allowedCount(await burst(euEngine, 200, rule, 'rebalanced')), 70);
      assert.equal(allowedCount(await burst(usEngine, 200, rule, 'rebalanced')), 30);
    } finally {
      await rebalancer.stop();
    }
  } finally {
    await Promise.all([euEngine.close(), usEngine.close()]);
    euClient.disconnect();
    usClient.disconnect();
  }
});
