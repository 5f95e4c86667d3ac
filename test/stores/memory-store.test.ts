import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bucketKey } from '../../src/core/ids.js';
import { parseRule } from '../../src/policies/rule.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { storeSuite } from './store-suite.js';

describe('MemoryStore', () => {
  const store = new MemoryStore();
  storeSuite(() => store);

  it('random keys cannot grow it past its cap; expired buckets go first, then the least recently used', async () => {
    let now = 1_000_000;
    const bounded = new MemoryStore({ maxKeys: 100, now: () => now });
    const shortLived = parseRule({ policy: 'token_bucket', capacity: 1, refillPerSecond: 1000 }); // full again after 1 ms
    const longLived = parseRule({ policy: 'token_bucket', capacity: 1, refillPerSecond: 0.001 });
    await bounded.consume(bucketKey('keep', 'r'), longLived, 1);
    for (let i = 0; i < 10_000; i++) await bounded.consume(bucketKey(`random-${i}`, 'r'), shortLived, 1);
    assert.ok(bounded.size <= 100, `size ${bounded.size}`);

    now += 10; // every short-lived bucket is now full again, i.e. expired
    const hot = bucketKey('hot', 'r');
    for (let i = 0; i < 50; i++) await bounded.consume(bucketKey(`late-${i}`, 'r'), longLived, 1);
    await bounded.consume(hot, longLived, 1);
    assert.ok(bounded.size <= 100);
    assert.equal((await bounded.peek(hot, longLived)).allowed, false, 'a live bucket is not evicted while expired ones remain');
  });

  it('runs on an injected clock: refill follows the clock, not the wall', async () => {
    let now = 0;
    const clocked = new MemoryStore({ now: () => now });
    const rule = parseRule({ policy: 'token_bucket', capacity: 2, refillPerSecond: 1 });
    const key = bucketKey('shop-a', 'create-order');
    assert.deepEqual([(await clocked.consume(key, rule, 1)).allowed, (await clocked.consume(key, rule, 1)).allowed, (await clocked.consume(key, rule, 1)).allowed], [true, true, false]);
    now += 1000;
    const d = await clocked.consume(key, rule, 1);
    assert.equal(d.allowed, true);
    assert.equal(d.remaining, 0);
    assert.equal(d.source, 'memory');
  });
});
