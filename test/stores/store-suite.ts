// The behaviour every Store must show, run against the memory store and against
// Redis (standalone and cluster) by the test files beside this one.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { bucketKey, hashedId } from '../../src/core/ids.js';
import { parseRule, POLICIES } from '../../src/policies/rule.js';
import { createLimiter } from '../../src/limiter/engine/create-limiter.js';
import type { Store } from '../../src/stores/store.js';
import { CAPACITY_200, refillDuring } from './capacity-200-rules.js';

let seq = 0;
const fresh = (label: string) => `${label}-${process.pid}-${seq++}`;

export function storeSuite(getStore: () => Store) {
  for (const policy of POLICIES) {
    it(`${policy}: 1,000 concurrent calls on one key with capacity 200 allow 200 (plus what refilled), never more`, async () => {
      const store = getStore();
      const rule = CAPACITY_200[policy];
      const key = bucketKey(fresh('burst'), 'route');
      const started = performance.now();
      const decisions = await Promise.all(Array.from({ length: 1000 }, () => store.consume(key, rule, 1)));
      const elapsed = performance.now() - started;
      const allowed = decisions.filter((d) => d.allowed).length;
      assert.ok(allowed >= 200, `allowed ${allowed} < 200`);
      assert.ok(allowed <= 200 + refillDuring(rule, elapsed), `allowed ${allowed} > 200 + refill over ${elapsed.toFixed(0)} ms`);
      for (const d of decisions.filter((x) => !x.allowed)) assert.ok(d.retryAfterMs > 0, 'a refusal says when to retry');
    });
  }

  it('the basic scenario: capacity 2, refill 1/s -> allow, allow, reject; 1 s later allow with 0 left', async () => {
    const limiter = createLimiter({ id: 'create-order', policy: 'token_bucket', capacity: 2, refillPerSecond: 1 }, getStore());
    const tenant = fresh('shop-a');
    assert.equal((await limiter.consume(tenant)).allowed, true);
    assert.equal((await limiter.consume(tenant)).allowed, true);
    const refused = await limiter.consume(tenant);
    assert.equal(refused.allowed, false);
    assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 1000, `retryAfterMs ${refused.retryAfterMs}`);
    await sleep(1000);
    const later = await limiter.consume(tenant);
    assert.equal(later.allowed, true);
    assert.equal(later.remaining, 0);
  });

  it('peek does not consume and reset starts the bucket full again', async () => {
    const limiter = createLimiter({ id: 'peek', policy: 'token_bucket', capacity: 3, refillPerSecond: 0.001 }, getStore());
    const key = fresh('tenant');
    assert.equal((await limiter.peek(key)).remaining, 3);
    assert.equal((await limiter.peek(key)).remaining, 3);
    assert.equal((await limiter.consume(key, 3)).remaining, 0);
    assert.equal((await limiter.peek(key)).allowed, false);
    await limiter.reset(key);
    assert.equal((await limiter.peek(key)).remaining, 3);
  });

  it('a request may cost several units, and a cost above capacity is a clear error', async () => {
    const limiter = createLimiter({ id: 'cost', policy: 'token_bucket', capacity: 10, refillPerSecond: 0.001 }, getStore());
    const key = fresh('tenant');
    assert.equal((await limiter.consume(key, 7)).remaining, 3);
    assert.equal((await limiter.consume(key, 4)).allowed, false);
    await assert.rejects(limiter.consume(key, 11), /cost: 11 exceeds the rule's capacity of 10/);
    await assert.rejects(limiter.consume(key, 0), /cost: must be a positive integer/);
    await assert.rejects(limiter.consume(key, 1.5), /cost: must be a positive integer/);
  });

  it('a key that is not an id is hashed into a bucket of its own; it never reaches a key raw', async () => {
    const store = getStore();
    const limiter = createLimiter({ id: 'ids', policy: 'token_bucket', capacity: 1, refillPerSecond: 0.001 }, store);
    const rule = limiter.rule;
    for (const raw of ['a{b', 'a}b', 'a:b', 'a b', 'a\nb', 'x'.repeat(65), '~ip.1.2.3.4', 'org:42']) {
      const suffix = fresh('k');
      const key = `${raw}${suffix}`;
      assert.equal((await limiter.consume(key)).allowed, true, JSON.stringify(key));
      assert.equal((await limiter.consume(key)).allowed, false, 'the same key, the same bucket');
      // the hashed bucket holds the unit; the raw text names no bucket
      assert.equal((await store.peek(bucketKey(hashedId(key), 'ids'), rule)).allowed, false);
    }
    const plain = fresh('plain');
    assert.equal((await limiter.consume(plain)).allowed, true);
    assert.equal((await store.peek(bucketKey(plain, 'ids'), rule)).allowed, false, 'an id is its own bucket');
    await assert.rejects(limiter.consume(''), /key: must be a non-empty string/);
    assert.throws(() => bucketKey('shop-a', 'orders:1'), /route: may contain only/);
  });

  it("nginx's `burst=2 delay=5`: a delay at or above the burst is nodelay", async () => {
    const limiter = createLimiter({ id: 'shape-over', policy: 'leaky_bucket', ratePerSecond: 1, burst: 2, delay: 5 }, getStore());
    const key = fresh('tenant');
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await limiter.consume(key));
    assert.deepEqual(decisions.map((d) => [d.allowed, d.delayMs]), [[true, 0], [true, 0], [true, 0], [false, 0]]);
  });

  it("nginx's `rate=1r/m burst=1000000 nodelay`: the whole burst at once, then one more a minute, exact", async () => {
    const limiter = createLimiter({ id: 'shape-huge', policy: 'leaky_bucket', ratePerSecond: 1 / 60, burst: 1_000_000, nodelay: true }, getStore());
    const key = fresh('tenant');
    const all = await limiter.consume(key, 1_000_001);
    assert.deepEqual([all.allowed, all.delayMs, all.remaining], [true, 0, 0]);
    // the queue drains in 1,000,001 minutes (694 days): the state holds that to the µs
    assert.ok(Math.abs(all.resetAfterMs - 1_000_001 * 60_000) <= 1, `resetAfterMs ${all.resetAfterMs}`);
    const next = await limiter.consume(key);
    assert.equal(next.allowed, false);
    assert.ok(next.retryAfterMs > 58_000 && next.retryAfterMs <= 60_000, `retryAfterMs ${next.retryAfterMs}`);
  });

  it('shaping: the leaky bucket accepts at once, delays, then refuses beyond the burst', async () => {
    const limiter = createLimiter({ id: 'shape', policy: 'leaky_bucket', ratePerSecond: 10, burst: 3 }, getStore());
    const key = fresh('tenant');
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await limiter.consume(key));
    assert.deepEqual(decisions.map((d) => d.allowed), [true, true, true, true, false, false]);
    assert.equal(decisions[0]!.delayMs, 0);
    assert.ok(decisions[1]!.delayMs > 0 && decisions[3]!.delayMs > decisions[1]!.delayMs, 'later requests wait longer');
  });

  it('rule parameters are validated with the field named', () => {
    assert.throws(() => parseRule({ policy: 'token_bucket', capacity: 0, refillPerSecond: 1 }), /rule\.capacity: must be at least 1/);
    assert.throws(() => parseRule({ policy: 'token_bucket', capacity: 1.5, refillPerSecond: 1 }), /rule\.capacity: must be an integer/);
    assert.throws(() => parseRule({ policy: 'token_bucket', capacity: 5, refillPerSecond: Number.POSITIVE_INFINITY }), /rule\.refillPerSecond/);
    assert.throws(() => parseRule({ policy: 'token_bucket', capacity: 5, refillPerSecond: -1 }), /rule\.refillPerSecond: must be positive/);
    assert.throws(() => parseRule({ policy: 'nope', capacity: 5 }), /rule\.policy: unknown policy "nope"/);
    assert.throws(() => parseRule({ policy: 'fixed_window', limit: 5 }), /rule\.windowMs/);
    assert.throws(() => parseRule({ policy: 'leaky_bucket', ratePerSecond: 1 / 60, burst: 1_000_000 }), /rule\.ratePerSecond: .*366 days \(3660 with nodelay\)/);
    assert.throws(() => parseRule({ policy: 'leaky_bucket', ratePerSecond: 1 / 60, burst: 10_000_000, nodelay: true }), /rule\.ratePerSecond: .*3660 days even with nodelay/);
    assert.throws(() => parseRule({ policy: 'gcra', capacity: 5, refillPerSecond: 1, extra: 1 }), /unknown field\(s\) extra/);
  });
}
