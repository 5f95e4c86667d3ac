// The primary's view of its workers' engines (src/process/worker-health.ts):
// the worst mode wins, a gone worker is forgotten, a report only on change.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EngineHealth } from '../../src/limiter/engine/engine.js';
import { reportHealth, WorkersHealth } from '../../src/process/worker-health.js';

const REDIS: EngineHealth = { mode: 'redis', storeReachable: true };
const FALLBACK: EngineHealth = { mode: 'fallback', storeReachable: false };

describe('workers health', () => {
  it('is the fallback when any serving worker decides on it, and lists each worker', () => {
    const health = new WorkersHealth();
    health.note(1, REDIS);
    health.note(2, FALLBACK);
    assert.deepEqual(health.combined([1, 2]), {
      mode: 'fallback',
      storeReachable: false,
      detail: '1 of 2 workers on the local fallback',
      workers: [{ pid: 1, ...REDIS }, { pid: 2, ...FALLBACK }],
    });
  });

  it('forgets a worker that no longer serves, and leaves out one that has not reported', () => {
    const health = new WorkersHealth();
    health.note(1, FALLBACK);
    health.note(2, REDIS);
    assert.deepEqual(health.combined([2, 3]), { mode: 'redis', storeReachable: true, detail: '0 of 1 workers on the local fallback', workers: [{ pid: 2, ...REDIS }] });
    assert.equal(health.combined([1, 2]).mode, 'redis', 'worker 1 was forgotten once gone');
  });

  it("says the longest of the workers' deadlines (each adapts to the same Redis on its own)", () => {
    const health = new WorkersHealth();
    health.note(1, { ...REDIS, deadlineMs: 5 });
    health.note(2, { ...REDIS, deadlineMs: 23.4 });
    assert.equal(health.combined([1, 2]).deadlineMs, 23.4);
    assert.equal(health.combined([1]).deadlineMs, 5);
  });

  it('reports at once, then only when the health changes', async () => {
    let now = REDIS;
    const sent: EngineHealth[] = [];
    const stop = reportHealth(() => now, (health) => sent.push(health), 5);
    try {
      assert.deepEqual(sent, [REDIS]);
      await sleep(50); // ten checks, no change: nothing more sent
      assert.deepEqual(sent, [REDIS]);
      now = FALLBACK;
      while (sent.length < 2) await sleep(5);
      await sleep(50);
      assert.deepEqual(sent, [REDIS, FALLBACK]);
    } finally {
      stop();
    }
  });
});
