// The bounded LRU every per-key cache of the resilience layer goes through:
// exact least-recently-used order, a hit or an update makes a key the newest,
// a new key past the bound evicts the oldest, and nothing else is evicted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BoundedLru } from '../../src/core/lru.js';

const filled = (max: number, ...keys: string[]) => {
  const lru = new BoundedLru<string, number>(max);
  for (const [i, key] of keys.entries()) lru.set(key, i);
  return lru;
};

test('a new key past the bound evicts the least recently used, and only it', () => {
  const lru = filled(3, 'a', 'b', 'c');
  lru.set('d', 3);
  assert.deepEqual([...lru.keys()], ['b', 'c', 'd']);
  assert.equal(lru.size, 3);
  assert.equal(lru.peek('a'), undefined);
});

test('get and set on a present key make it the newest; peek leaves the order alone', () => {
  const lru = filled(3, 'a', 'b', 'c');
  assert.equal(lru.get('b'), 1);
  assert.equal(lru.get('a'), 0);
  assert.deepEqual([...lru.keys()], ['c', 'b', 'a']);
  lru.set('c', 9);
  assert.deepEqual([...lru.keys()], ['b', 'a', 'c']);
  assert.equal(lru.peek('b'), 1);
  assert.deepEqual([...lru.keys()], ['b', 'a', 'c']);
  // Two evictions in a row follow the order exactly: b, then a.
  lru.set('d', 3);
  lru.set('e', 4);
  assert.deepEqual([...lru.keys()], ['c', 'd', 'e']);
  assert.equal(lru.get('c'), 9, 'the update kept its value');
});

test('an update of a present key never evicts, and the newest key touched again stays put', () => {
  const lru = filled(2, 'a', 'b');
  lru.set('b', 5);
  lru.set('b', 6);
  assert.equal(lru.get('b'), 6);
  assert.deepEqual([...lru.keys()], ['a', 'b']);
  assert.equal(lru.size, 2);
});

test('delete unlinks a key from either end or the middle; clear empties it', () => {
  const lru = filled(5, 'a', 'b', 'c', 'd');
  assert.equal(lru.delete('b'), true);
  assert.equal(lru.delete('b'), false);
  assert.equal(lru.delete('a'), true);
  assert.equal(lru.delete('d'), true);
  assert.deepEqual([...lru.keys()], ['c']);
  lru.set('e', 4);
  assert.deepEqual([...lru.keys()], ['c', 'e']);
  lru.clear();
  assert.equal(lru.size, 0);
  assert.deepEqual([...lru.keys()], []);
  lru.set('f', 5);
  assert.deepEqual([...lru.keys()], ['f']);
});

test('the caller may delete each key it is handed while walking the keys', () => {
  const lru = filled(4, 'a', 'b', 'c', 'd');
  const seen: string[] = [];
  for (const key of lru.keys()) {
    seen.push(key);
    lru.delete(key);
  }
  assert.deepEqual(seen, ['a', 'b', 'c', 'd']);
  assert.equal(lru.size, 0);
});

test('a flood of fresh keys keeps it at its bound, with the newest kept', () => {
  const lru = new BoundedLru<string, number>(100);
  for (let i = 0; i < 10_000; i++) lru.set(`k${i}`, i);
  assert.equal(lru.size, 100);
  assert.equal([...lru.keys()][0], 'k9900');
  assert.equal(lru.get('k9999'), 9999);
});

test('a bound that is no positive integer is refused', () => {
  assert.throws(() => new BoundedLru(0), RangeError);
  assert.throws(() => new BoundedLru(1.5), RangeError);
});
