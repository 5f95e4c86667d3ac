// The sender's bounded queue: past maxQueued an event is dropped, counted at
// /metrics and listed; a delivery out of retry time fails and is counted. The
// POST is handed in (no socket in a unit test); the int tests use a receiver.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import { Secret } from '../../src/notify/config.js';
import type { ThresholdEvent } from '../../src/notify/event.js';
import { type Job, type Post, WebhookSender } from '../../src/notify/sender.js';

const logger = pino({ level: 'silent' });
const target = { at: [0.8], url: 'http://receiver.test/hook', secret: new Secret('s'), timeoutMs: 1_000, retryForMs: 0 };
const job = (n: number): Job => {
  const event: ThresholdEvent = { id: `evt_${n}`, type: 'limit.threshold', tenant: `t${n}`, limit: 'daily', route: 'search', threshold: 0.8, limitValue: 10, remaining: 2, windowResetAt: '2026-01-01T00:00:00.000Z', at: '2026-01-01T00:00:00.000Z' };
  return { event, target, claim: { key: `k${n}`, ttlMs: 1_000 } };
};

async function counted(outcome: string): Promise<number> {
  const text = await resilienceRegistry.metrics();
  return Number(new RegExp(`^sluice_notifications_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
}

/** A receiver that holds every POST until released. */
function heldPost(): { post: Post; calls: string[]; release: (status: number) => void } {
  const calls: string[] = [];
  const waiting: ((status: number) => void)[] = [];
  const post: Post = (_url, init) => {
    calls.push(init.body);
    return new Promise<number>((resolve) => waiting.push(resolve));
  };
  return { post, calls, release: (status) => {
      for (const resolve of waiting.splice(0)) resolve(status);
    },
  };
}

describe('WebhookSender', () => {
  it('drops past maxQueued, counts and lists what it dropped, and sends the rest', async () => {
    const held = heldPost();
    const sender = new WebhookSender({ maxQueued: 3, concurrency: 1, drainMs: 1_000, logger, post: held.post });
    const droppedBefore = await counted('dropped');
    const accepted = [1, 2, 3, 4, 5].map((n) => sender.enqueue(job(n)));
    assert.deepEqual(accepted, [true, true, true, false, false]);
    assert.equal(sender.pending, 3);
    assert.equal((await counted('dropped')) - droppedBefore, 2);
    assert.deepEqual(sender.recent.list().map((record) => [record.tenant, record.outcome, record.detail]), [['t5', 'dropped', 'queue full'], ['t4', 'dropped', 'queue full']]);
    // One in flight at a time: the others wait for it.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(held.calls.length, 1);
    const sentBefore = await counted('sent');
    while (sender.pending > 0) {
      held.release(204);
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(held.calls.length, 3);
    assert.equal((await counted('sent')) - sentBefore, 3);
    await sender.close();
  });

  it('fails and counts a delivery whose retry time is out (retryForMs 0: one attempt)', async () => {
    const failedBefore = await counted('failed');
    const sender = new WebhookSender({ maxQueued: 10, concurrency: 2, drainMs: 1_000, logger, post: async () => 500 });
    sender.enqueue(job(9));
    while (sender.pending > 0) await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await counted('failed')) - failedBefore, 1);
    assert.deepEqual(sender.recent.list().map((record) => [record.outcome, record.attempts, record.detail]), [['failed', 1, 'HTTP 500']]);
    await sender.close();
  });

  it('counts as duplicate, and never POSTs, an event another instance claimed', async () => {
    const posted: string[] = [];
    const before = await counted('duplicate');
    const sender = new WebhookSender({ maxQueued: 10, concurrency: 1, drainMs: 1_000, logger, claim: async (key) => key !== 'k7', post: async (_url, init) => {
        posted.push(init.body);
        return 200;
      },
    });
    sender.enqueue(job(7));
    sender.enqueue(job(8));
    while (sender.pending > 0) await new Promise((resolve) => setImmediate(resolve));
    assert.equal((await counted('duplicate')) - before, 1);
    assert.deepEqual(posted.map((body) => (JSON.parse(body) as ThresholdEvent).id), ['evt_8']);
    await sender.close();
  });

  it('after close, accepts nothing and drops what could not go out within drainMs', async () => {
    const held = heldPost();
    const sender = new WebhookSender({ maxQueued: 10, concurrency: 1, drainMs: 0, logger, post: held.post });
    sender.enqueue(job(1));
    sender.enqueue(job(2));
    await sender.close();
    assert.equal(sender.enqueue(job(3)), false);
    const outcomes = sender.recent.list().map((record) => `${record.tenant}:${record.outcome}:${record.detail}`);
    assert.ok(outcomes.includes('t2:dropped:shutdown') && outcomes.includes('t3:dropped:shutdown'), outcomes.join(' '));
  });
});
