// Threshold events from a real gateway to a receiver started here: one signed
// event when a tenant crosses 80 %, one for the cluster from two gateways on
// one redis-server, a retry after a 500, requests unslowed by a receiver that
// never answers, and a new window sending again.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningSluice } from '../../src/app.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import type { ThresholdEvent } from '../../src/notify/event.js';
import { verifySignature } from '../../src/notify/signature.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { type Receiver, startReceiver } from '../helpers/notify-receiver.js';

const SECRET = 'notify-secret-0123456789';
const TOKEN = 'notify-admin-token-0123456789abcdef';
const KEY = { 'x-api-key': 'acme-key-0001' };

const yaml = (url: string, rule: string, at = '[0.8]', extra = '') => `
routes:
  - id: search
    path: /search
    upstream: '\${UP}'
    limits:
      - id: daily
        rule: ${rule}
        notify: { at: ${at}, url: '${url}', secretEnv: HOOK_SECRET, timeoutMs: 300, retryForMs: 3000 }
tenants: { keys: [{ key: acme-key-0001, tenant: acme }] }
${extra}`;
const HOUR_WINDOW = '{ policy: fixed_window, limit: 10, windowMs: 3600000 }';

const events = (receiver: Receiver) => receiver.received.map((post) => JSON.parse(post.body) as ThresholdEvent);
const signed = (receiver: Receiver) => receiver.received.every((post) => verifySignature(SECRET, String(post.headers['sluice-signature']), post.body, Math.floor(Date.now() / 1000)));

async function requests(app: RunningSluice, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push((await call(`${app.url}/search`, { headers: KEY })).status);
  return out;
}

/** Until nothing is queued, in flight or waiting for a retry on any of the gateways. */
async function settled(...apps: RunningSluice[]): Promise<void> {
  while (apps.some((app) => app.gateway.notifications().pending > 0)) await sleep(20);
}

async function counted(name: string, outcome?: string): Promise<number> {
  const text = await resilienceRegistry.metrics();
  const label = outcome === undefined ? '' : `\\{outcome="${outcome}"\\}`;
  return Number(new RegExp(`^${name}${label} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
}

describe('notifications from a gateway', () => {
  let upstream: TestUpstream;
  let redis: RedisServer;
  const open: { close(): Promise<void> }[] = [];
  const dirs: string[] = [];
  const start = async (text: string, options: { admin?: boolean } = {}) => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-notify-'));
    dirs.push(dir);
    const env = { UP: upstream.url, HOOK_SECRET: SECRET, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir };
    const app = await startGateway(text, env, options.admin ? { ruleStore: true, admin: true } : {});
    open.push(app);
    return app;
  };
  const receiver = async (answer?: Receiver['answer']) => {
    const started = await startReceiver(answer);
    open.push(started);
    return started;
  };

  before(async () => {
    upstream = await startUpstream();
    redis = await startRedis();
  });
  after(async () => {
    for (const item of open.reverse()) await item.close();
    await upstream.close();
    await redis.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('sends exactly one signed event when a tenant crosses 80 %, listed at GET /notifications', async () => {
    const hook = await receiver();
    const app = await start(yaml(hook.url, HOUR_WINDOW), { admin: true });
    assert.deepEqual(await requests(app, 7), [200, 200, 200, 200, 200, 200, 200]);
    assert.equal(hook.received.length + app.gateway.notifications().pending, 0, 'nothing below 80 %');
    assert.deepEqual(await requests(app, 5), [200, 200, 200, 429, 429]); // 80 %, 90 %, 100 %, refused twice
    await hook.waitFor(1);
    await settled(app);
    assert.equal(hook.received.length, 1);
    const [event] = events(hook);
    assert.deepEqual({ ...event, id: undefined, at: undefined, windowResetAt: undefined }, { id: undefined, at: undefined, windowResetAt: undefined, type: 'limit.threshold', tenant: 'acme', limit: 'daily', route: 'search', threshold: 0.8, limitValue: 10, remaining: 2 });
    assert.equal(hook.received[0]!.headers['content-type'], 'application/json');
    assert.ok(signed(hook), 'the signature verifies with the secret');
    const listed = await call(`${app.adminUrl}/notifications`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(listed.status, 200);
    const body = JSON.parse(listed.body) as { pending: number; recent: { id: string; outcome: string; tenant: string; attempts: number }[] };
    assert.deepEqual(body.recent.map((record) => [record.id, record.outcome, record.tenant, record.attempts]), [[event!.id, 'sent', 'acme', 1]]);
    assert.doesNotMatch(listed.body, new RegExp(`${SECRET}|${hook.url}`));
  });

  it('sends one event in all from two gateways on one redis-server, the other counted as duplicate', async () => {
    const hook = await receiver();
    const text = yaml(hook.url, HOUR_WINDOW, '[0.8]', `store: { type: redis, url: '${redis.url}' }`);
    const apps = [await start(text), await start(text)];
    const duplicates = await counted('sluice_notifications_total', 'duplicate');
    // Alternating, so each gateway decides twice at or past 80 % (the 8th to the 10th request).
    for (let i = 0; i < 10; i++) assert.equal((await call(`${apps[i % 2]!.url}/search`, { headers: KEY })).status, 200);
    await hook.waitFor(1);
    await settled(...apps);
    assert.equal(hook.received.length, 1);
    assert.ok(signed(hook));
    assert.equal((await counted('sluice_notifications_total', 'duplicate')) - duplicates, 1);
    const client = redis.client();
    try {
      const keys = await client.keys('sluice:notify:*');
      assert.equal(keys.length, 1);
      assert.match(keys[0]!, /^sluice:notify:\{acme\}:daily:\d+:0\.8$/);
    } finally {
      client.disconnect();
    }
  });

  it('retries a receiver that answers 500, then delivers', async () => {
    const hook = await receiver((index) => (index === 0 ? 500 : 200));
    const app = await start(yaml(hook.url, HOUR_WINDOW));
    const retries = await counted('sluice_notification_retries_total');
    await requests(app, 8);
    await hook.waitFor(2);
    await settled(app);
    const [first, second] = events(hook);
    assert.equal(hook.received.length, 2);
    assert.equal(second!.id, first!.id);
    assert.ok(signed(hook));
    assert.equal((await counted('sluice_notification_retries_total')) - retries, 1);
    assert.deepEqual(app.gateway.notifications().recent.map((record) => [record.outcome, record.attempts]), [['sent', 2]]);
  });

  it('answers every request while the receiver never answers; the event is retried, then counted failed', async () => {
    const hook = await receiver(() => 'hang');
    const app = await start(yaml(hook.url, '{ policy: fixed_window, limit: 40, windowMs: 3600000 }', '[0.5]'));
    const failed = await counted('sluice_notifications_total', 'failed');
    await requests(app, 20);
    await hook.waitFor(1); // the first POST is now hanging
    const statuses = await requests(app, 25);
    assert.deepEqual([...new Set(statuses)].sort(), [200, 429]);
    await hook.waitFor(2); // timed out, then tried again
    await settled(app);
    assert.equal((await counted('sluice_notifications_total', 'failed')) - failed, 1);
    const [record] = app.gateway.notifications().recent;
    assert.deepEqual([record?.outcome, record?.detail], ['failed', 'timeout']);
    assert.ok(record!.attempts >= 2);
  });

  it('sends again in a new window', async () => {
    const hook = await receiver();
    const app = await start(yaml(hook.url, '{ policy: fixed_window, limit: 2, windowMs: 1000 }', '[1.0]'));
    const windows = () => new Set(events(hook).map((event) => event.windowResetAt));
    while (windows().size < 2) {
      await requests(app, 2);
      await sleep(100);
    }
    await settled(app);
    const ids = events(hook).map((event) => event.id);
    assert.equal(new Set(ids).size, ids.length, 'one event per window');
    assert.ok(signed(hook));
  });
});
