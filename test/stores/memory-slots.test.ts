// The in-process lease store stays bounded: a key leaves the map with its last
// lease, expired keys go first at the cap, and random keys never grow it past
// maxKeys.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemorySlotStore } from '../../src/stores/memory-slots.js';

describe('MemorySlotStore', () => {
  it('drops a key with its last lease, and holds at most maxKeys keys under random keys', () => {
    let now = 1_000_000;
    const store = new MemorySlotStore(100, () => now);
    const call = (key: string, leaseId: string) => ({ key, max: 2, leaseId, ttlMs: 1000 });
    assert.equal(store.step('acquire', call('k', 'a')).held, true);
    assert.equal(store.step('acquire', call('k', 'b')).held, true);
    assert.equal(store.step('acquire', call('k', 'c')).held, false);
    store.step('release', call('k', 'a'));
    store.step('release', call('k', 'b'));
    assert.equal(store.size, 0, 'a key without leases is not kept');
    for (let i = 0; i < 10_000; i++) store.step('acquire', call(`random-${i}`, 'x'));
    assert.equal(store.size, 100);
    now += 1001; // every lease expired: the next inserts reuse their room
    for (let i = 0; i < 50; i++) store.step('acquire', call(`fresh-${i}`, 'x'));
    assert.ok(store.size <= 100);
  });
});
