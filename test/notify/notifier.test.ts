// The gateway's side: after each decision, an event per threshold reached,
// once per bucket, window and threshold (the local dedup), none for a limit
// without notify or a store-down decision, again in a new window.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import type { Decision } from '../../src/core/decision.js';
import { parseRule } from '../../src/policies/rule.js';
import { type NotificationsConfig, Secret } from '../../src/notify/config.js';
import type { ThresholdEvent } from '../../src/notify/event.js';
import { Notifier } from '../../src/notify/notifier.js';

const logger = pino({ level: 'silent' });
const WINDOW = 60_000;
const rule = parseRule({ policy: 'fixed_window', limit: 5, windowMs: WINDOW }, 'rule');
const config: NotificationsConfig = {
  limits: { daily: { at: [0.8, 1], url: 'http://receiver.test/hook', secret: new Secret('s'), timeoutMs: 1_000, retryForMs: 0 } },
  maxQueued: 100,
  concurrency: 4,
  drainMs: 0,
};
const daily = { limitId: 'daily', bucket: { tag: 'acme', name: 'daily' }, rule };
const other = { limitId: 'other', bucket: { tag: 'acme', name: 'other' }, rule };

function harness(start = Date.UTC(2026, 0, 1, 12, 0, 10)) {
  let now = start;
  const sent: ThresholdEvent[] = [];
  const notifier = new Notifier(config, { logger, now: () => now, post: async (_url, init) => {
      sent.push(JSON.parse(init.body) as ThresholdEvent);
      return 200;
    },
  });
  /** A decision of the fixed window with `remaining` left, at the harness's time. */
  const decided = (remaining: number, extra: Partial<Decision> = {}): Decision => ({ allowed: true, remaining, limit: 5, resetAfterMs: WINDOW - (now % WINDOW), retryAfterMs: 0, delayMs: 0, source: 'redis', ...extra });
  const settle = async () => {
    while (notifier.view().pending > 0) await new Promise((resolve) => setImmediate(resolve));
  };
  return { notifier, sent, decided, settle, advance: (ms: number) => (now += ms) };
}

describe('Notifier', () => {
  it('sends one event when a tenant crosses 80 %, however many requests follow in the window', async () => {
    const { notifier, sent, decided, settle } = harness();
    for (const remaining of [4, 3, 2]) notifier.observe('acme', 'search', [daily], [decided(remaining)]);
    await settle();
    assert.equal(sent.length, 0);
    notifier.observe('acme', 'search', [daily], [decided(1)]);
    notifier.observe('acme', 'search', [daily], [decided(1)]);
    await settle();
    assert.equal(sent.length, 1);
    assert.deepEqual({ ...sent[0], id: undefined }, {
      id: undefined,
      type: 'limit.threshold',
      tenant: 'acme',
      limit: 'daily',
      route: 'search',
      threshold: 0.8,
      limitValue: 5,
      remaining: 1,
      windowResetAt: '2026-01-01T12:01:00.000Z',
      at: '2026-01-01T12:00:10.000Z',
    });
    assert.match(sent[0]!.id, /^evt_[0-9a-f]{32}$/);
    await notifier.close();
  });

  it('sends 1.0 when the limit is exhausted or a request refused, once', async () => {
    const { notifier, sent, decided, settle } = harness();
    notifier.observe('acme', 'search', [daily], [decided(0)]); // 0.8 and 1.0 at once
    notifier.observe('acme', 'search', [daily], [decided(0, { allowed: false })]);
    await settle();
    assert.deepEqual(sent.map((event) => event.threshold).sort(), [0.8, 1]);
    await notifier.close();
  });

  it('sends again in a new window, with another id', async () => {
    const { notifier, sent, decided, settle, advance } = harness();
    notifier.observe('acme', 'search', [daily], [decided(1)]);
    advance(WINDOW);
    notifier.observe('acme', 'search', [daily], [decided(1)]);
    await settle();
    assert.equal(sent.length, 2);
    assert.notEqual(sent[0]!.id, sent[1]!.id);
    assert.deepEqual(sent.map((event) => event.windowResetAt), ['2026-01-01T12:01:00.000Z', '2026-01-01T12:02:00.000Z']);
    await notifier.close();
  });

  it('keeps buckets apart, skips limits without notify and store-down decisions', async () => {
    const { notifier, sent, decided, settle } = harness();
    notifier.observe('acme', 'search', [other, daily], [decided(0), decided(4)]);
    notifier.observe('acme', 'search', [daily], [decided(0, { source: 'open' })]);
    notifier.observe('acme', 'search', [daily], [decided(0, { allowed: false, source: 'closed' })]);
    await settle();
    assert.equal(sent.length, 0);
    notifier.observe('acme', 'search', [daily], [decided(1)]);
    notifier.observe('globex', 'search', [{ ...daily, bucket: { ...daily.bucket, tag: 'globex' } }], [decided(1)]);
    await settle();
    assert.deepEqual(sent.map((event) => event.tenant), ['acme', 'globex']);
    await notifier.close();
  });

  it('follows a reloaded config: a limit whose notify is gone sends nothing', async () => {
    const { notifier, sent, decided, settle } = harness();
    notifier.reconfigure({ ...config, limits: {} });
    notifier.observe('acme', 'search', [daily], [decided(0)]);
    await settle();
    assert.equal(sent.length, 0);
    await notifier.close();
  });
});
