// The dashboard's counting parts: fixed memory whatever the number of tenants,
// shadow refusals seen without changing what the gateway gets, and per-second
// series merged across instances on the same seconds.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Rule } from '../../src/policies/rule.js';
import { RecentHeavyHitters, SpaceSaving } from '../../src/dashboard/heavy-hitters.js';
import { EngineObserver } from '../../src/dashboard/engine-observer.js';
import { SecondRing } from '../../src/dashboard/second-ring.js';
import { type InstanceSnapshot, mergeSnapshots } from '../../src/dashboard/snapshot.js';
import { StoreEngine } from '../../src/limiter/engine/engine.js';
import { MemoryStore } from '../../src/stores/memory-store.js';

describe('heavy hitters', () => {
  it('keep at most their capacity of counters, and find the heavy key among 10 000 light ones', () => {
    const top = new SpaceSaving(16);
    for (let i = 0; i < 10_000; i++) {
      top.add(`light-${i}`);
      if (i % 10 === 0) top.add('heavy');
    }
    assert.equal(top.size, 16);
    const [first] = top.entries().sort((a, b) => b.count - a.count);
    assert.equal(first?.key, 'heavy');
    assert.ok(first!.count - first!.error <= 1000 && first!.count >= 1000, 'count is an upper bound, count - error a lower bound');
  });

  it('forget refusals older than two windows', () => {
    const recent = new RecentHeavyHitters(8, 60_000, 0);
    recent.add('old', 1_000);
    recent.add('newer', 61_000);
    assert.deepEqual(recent.top(5, 61_000).map((h) => h.key).sort(), ['newer', 'old']);
    assert.deepEqual(recent.top(5, 121_000).map((h) => h.key), ['newer']);
    assert.deepEqual(recent.top(5, 400_000), []);
  });
});

describe('second ring', () => {
  it('counts per second and reuses a slot once its second is a minute old', () => {
    const ring = new SecondRing();
    ring.add(100, 'allowed');
    ring.add(100, 'refused');
    ring.add(101, 'allowed');
    ring.add(160, 'shadowRefused'); // same slot as 100
    const series = ring.series(160, 61);
    assert.equal(series.allowed[0], 0, 'second 100 was overwritten by 160');
    assert.equal(series.allowed[1], 1);
    assert.equal(series.shadowRefused[60], 1);
  });
});

describe('EngineObserver', () => {
  const shadow: Rule = { policy: 'token_bucket', capacity: 1, refillPerSecond: 0.001, shadow: true };
  const strict: Rule = { policy: 'token_bucket', capacity: 1, refillPerSecond: 0.001 };

  it('returns what the engine alone returns, and counts what a shadow rule would have refused', async () => {
    const plain = new StoreEngine(new MemoryStore());
    const observed = new StoreEngine(new MemoryStore());
    const observer = new EngineObserver(observed, () => 5_000);
    for (let i = 0; i < 3; i++) {
      const expected = await plain.decide({ tag: 't', name: 'r' }, shadow);
      const got = await observed.decide({ tag: 't', name: 'r' }, shadow);
      assert.deepEqual({ ...got, resetAfterMs: 0 }, { ...expected, resetAfterMs: 0 });
      assert.equal(got.allowed, true);
      assert.equal(got.source, 'shadow');
    }
    await observed.decide({ tag: 'u', name: 'r' }, strict);
    assert.equal((await observed.decide({ tag: 'u', name: 'r' }, strict)).allowed, false);
    const view = observer.stats.view(5_000);
    assert.deepEqual(view.routes.r?.shadowRefused.at(-1), 2);
    assert.deepEqual(view.routes.r?.refused.at(-1), 1);
    assert.deepEqual(view.routes.r?.allowed.at(-1), 2);
    assert.deepEqual(view.shadowTop, [{ tenant: 't', route: 'r', count: 2 }]);
    assert.deepEqual(view.top, [{ tenant: 'u', route: 'r', count: 1 }]);
    observer.detach();
    await Promise.all([plain.close(), observed.close()]);
  });

  it('keeps a bounded top list when 5 000 tenants are refused', async () => {
    const observed = new StoreEngine(new MemoryStore());
    const observer = new EngineObserver(observed);
    for (let i = 0; i < 5_000; i++) await observed.decide({ tag: `tenant-${i}`, name: 'r' }, { ...strict, capacity: 1 }, 1).then(() => observed.decide({ tag: `tenant-${i}`, name: 'r' }, strict));
    const view = observer.stats.view(Date.now());
    assert.equal(view.top.length, 20);
    observer.detach();
    await observed.close();
  });
});

describe('mergeSnapshots', () => {
  const snapshot = (id: string, endSecond: number, allowed: number[]): InstanceSnapshot => ({
    id,
    version: '0.0.0',
    at: endSecond * 1000,
    mode: 'redis',
    breaker: 'closed',
    instances: 2,
    stats: {
      endSecond,
      routes: { r: { allowed: [...new Array(60 - allowed.length).fill(0), ...allowed], refused: new Array(60).fill(0), shadowRefused: new Array(60).fill(0) } },
      top: [{ tenant: 'x', route: 'r', count: 2 }],
      shadowTop: [],
      degraded: { fallback: 1 },
    },
  });

  it('adds the instances second by second, aligned on Unix seconds, and sums their top lists', () => {
    const view = mergeSnapshots([snapshot('a', 1000, [1, 2]), snapshot('b', 999, [10])], 'a');
    assert.equal(view.seconds.at(-1), 1000);
    assert.deepEqual(view.routes.r?.allowed.slice(-2), [11, 2]);
    assert.deepEqual(view.top, [{ tenant: 'x', route: 'r', count: 4 }]);
    assert.deepEqual(view.degraded, { fallback: 2 });
    assert.deepEqual(view.instances.map((i) => [i.id, i.self]), [['a', true], ['b', false]]);
  });
});
