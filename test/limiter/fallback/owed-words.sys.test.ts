// A word from Redis said while this instance still owes the bucket what its
// fallback admitted (the debt not charged yet, or its charge in flight) does
// not hold those units. Found as the Sentinel failover test's flake: a probe
// the client queued through the reconnect reached the promoted master before
// the charge; read as holding it, its word claimed 199 units lost (100 were)
// and gave the fallback a fresh share of 149 on a spent quota (741 of 600).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { bucketKey } from '../../../src/core/ids.js';
import { parseRule } from '../../../src/policies/rule.js';
import { DebtCollector } from '../../../src/limiter/fallback/debt-collector.js';
import { FallbackLimiter } from '../../../src/limiter/fallback/fallback.js';
import { ChainStats } from '../../../src/limiter/metrics/stats.js';
import { RedisStore } from '../../../src/stores/redis-store.js';
import { type RedisServer, startRedis } from '../../helpers/redis-server.js';
import { silent } from '../../helpers/resilient-engine.js';

const quota = parseRule({ policy: 'sliding_window_log', limit: 600, windowMs: 3_600_000 });
const half = parseRule({ policy: 'sliding_window_log', limit: 300, windowMs: 3_600_000 });
const KEY = 'rl:{shop}:orders';

test('the fallback asks whether the bucket is owed: a word said before the charge keeps the local admissions counted', () => {
  const owed = new Set<string>();
  const fallback = new FallbackLimiter({ maxKeys: 10, stateCacheSize: 10, owes: (key) => owed.has(key), now: () => 1000 });
  fallback.remember(KEY, KEY, quota, { remaining: 200, resetAfterMs: 3_600_000 }, 1);
  fallback.beginEpisode();
  let admitted = 0;
  for (let i = 0; i < 120; i++) if (fallback.decide({ key: KEY, rule: half, cost: 1, shadow: false, pendingMs: 0 }, { breakerOpen: true }).allowed) admitted++;
  assert.equal(admitted, 100, 'half of the 200 left');
  owed.add(KEY);
  // The promoted master lacks 100 lost writes, and this instance's 100 are not charged yet.
  assert.equal(fallback.remember(KEY, KEY, quota, { remaining: 299, resetAfterMs: 3_600_000 }, 1), 100, 'the lost writes, not 199');
  assert.equal(fallback.decide({ key: KEY, rule: half, cost: 1, shadow: false, pendingMs: 0 }, { breakerOpen: false }).allowed, false, 'the share stays spent');
});

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis.stop();
});

test("the collector owes a bucket from the fallback's admission until its charge has landed, in flight included", async () => {
  const client = redis.client();
  const store = new RedisStore(client, { connectGraceMs: 0 });
  const fallback = new FallbackLimiter({ maxKeys: 10, stateCacheSize: 10 });
  const stats = new ChainStats(silent);
  const debts = new DebtCollector({ store, maxKeys: 10, timeoutMs: 5000, peekTimeoutMs: () => 5000, fallback, stats, logger: silent });
  const bucket = bucketKey('shop', 'orders');
  try {
    assert.equal(debts.owes(bucket.key), false);
    debts.owe(bucket, quota, 'fp', 5);
    assert.equal(debts.owes(bucket.key), true, 'owed');
    redis.pause();
    const charging = debts.chargeAll();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(debts.owes(bucket.key), true, 'its charge in flight: a reply read now was sent before it');
    redis.resume();
    await charging;
    assert.equal(stats.chargedUnits, 5);
    assert.equal(debts.owes(bucket.key), false, 'charged');
  } finally {
    redis.resume();
    await store.close();
  }
});
