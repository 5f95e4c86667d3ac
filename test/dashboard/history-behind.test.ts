// The history's "behind": a recorder whose store refuses writes counts the
// batches waiting, the page's overview says so (snapshot.history.behind), and
// the count goes back to 0 once a write goes through.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { HistoryRecorder } from '../../src/dashboard/history-recorder.js';
import { LocalHistory } from '../../src/dashboard/history-local.js';
import { type HistoryBatch, TEN_SECONDS } from '../../src/dashboard/history-store.js';

class FlakyHistory extends LocalHistory {
  down = false;
  override async add(batch: HistoryBatch): Promise<void> {
    if (this.down) throw new Error('store away');
    await super.add(batch);
  }
}

describe('the history behind', () => {
  it('counts the batches a failing store has not taken, and is 0 again once one write goes through', async () => {
    const started = 1_800_000_000_000;
    let now = started;
    const store = new FlakyHistory(() => now);
    const recorder = new HistoryRecorder(store, 'inst', pino({ level: 'silent' }), () => now);
    recorder.request('orders', 0, 200, 3, 1);
    await recorder.flush();
    assert.equal(recorder.behind, 0, 'written at once');
    store.down = true;
    for (let i = 0; i < 3; i++) {
      now += 10_000;
      recorder.request('orders', 0, 200, 3, 1);
      await recorder.flush();
    }
    assert.equal(recorder.behind, 3, 'three 10-s buckets waiting');
    store.down = false;
    await recorder.flush();
    assert.equal(recorder.behind, 0);
    const view = await store.read(TEN_SECONDS, started / 1000 - 10, now / 1000);
    assert.equal(view.size, 4, 'every bucket written in the end');
  });
});
