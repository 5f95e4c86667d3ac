// The shaping queue holds a request for the whole delay its leaky bucket asked,
// however long: a delay beyond one timer's range (about 24.8 days, which a
// slow queue under the 366-day drain bound can ask) is not cut to 1 ms.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { ShapingQueue } from '../../src/gateway/shaping.js';

const response = () => new EventEmitter() as unknown as ServerResponse;

describe('shaping queue', () => {
  it('holds a request delayed beyond one timer range, until its client leaves', async () => {
    const queue = new ShapingQueue(10);
    const res = response();
    let released = false;
    assert.equal(queue.hold(res, 2 ** 31 + 60_000, () => (released = true)), true);
    await sleep(50);
    assert.equal(released, false, 'a 24.9-day delay must not release the request at once');
    assert.equal(queue.size, 1);
    res.emit('close');
    assert.equal(queue.size, 0);
  });

  it('releases an ordinary delay, and refuses past its cap', async () => {
    const queue = new ShapingQueue(1);
    let released = 0;
    assert.equal(queue.hold(response(), 5, () => released++), true);
    assert.equal(queue.hold(response(), 5, () => released++), false);
    await sleep(40);
    assert.equal(released, 1);
    assert.equal(queue.size, 0);
  });
});
