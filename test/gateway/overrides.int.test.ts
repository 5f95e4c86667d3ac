// Per-key overrides through the real gateway over real HTTP: an override PUT on
// the admin API reaches the running gateway (polled, never timed), lets a login
// route admit more for one IP or CIDR, gives a keyed tenant its own quota over
// its tenant × route rule, is served by the decision service's /decide too,
// and on PostgreSQL reaches a second instance.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { type PostgresHost, postgresForFile } from '../helpers/shared-servers.js';
import { createDatabase } from '../helpers/postgres-db.js';
import { eventually } from '../helpers/poll.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const TOKEN = 'overrides-admin-token-0123456789';
const SHOP_A = { 'x-api-key': 'key-shop-a-0001' };
const SHOP_B = { 'x-api-key': 'key-shop-b-0002' };
const YAML = `
routes:
  - id: login
    methods: [POST]
    path: /login
    upstream: \${UP}
    anonymous: true
    limits: [{ id: login-per-ip, key: ip, rule: { policy: fixed_window, limit: 3, windowMs: 600000 } }]
  - id: orders
    path: /orders
    upstream: \${UP}
tenants:
  keys:
    - { key: key-shop-a-0001, tenant: shop-a }
    - { key: key-shop-b-0002, tenant: shop-b }
defaultRule: { policy: fixed_window, limit: 2, windowMs: 600000 }
clientIp: { trustedProxies: [127.0.0.1] }
`;
const window = (limit: number) => ({ policy: 'fixed_window', limit, windowMs: 600_000 });

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function start(upstream: TestUpstream, databaseUrl?: string): Promise<RunningSluice> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-overrides-'));
  dirs.push(dir);
  const env = { UP: upstream.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_DECISION_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir, ...(databaseUrl ? { SLUICE_DATABASE_URL: databaseUrl } : {}) };
  return startGateway(YAML, env, { ruleStore: true, admin: true });
}

async function admin(app: RunningSluice, method: string, path: string, body?: unknown): Promise<number> {
  const reply = await call(`${app.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return reply.status;
}

const overridePath = (limitId: string, selector: string) => `/limits/${limitId}/overrides/${encodeURIComponent(selector)}`;
const login = (app: RunningSluice, ip: string) => call(`${app.url}/login`, { method: 'POST', headers: { 'x-forwarded-for': ip } });
const orders = (app: RunningSluice, headers: Record<string, string>) => call(`${app.url}/orders`, { headers });

async function admitted(times: number, send: () => ReturnType<typeof call>): Promise<number> {
  let ok = 0;
  for (let i = 0; i < times; i++) if ((await send()).status === 200) ok++;
  return ok;
}

/** Polls with fresh clients until the gateway answers with `limit` as X-RateLimit-Limit. */
async function limitSeen(probe: (attempt: number) => ReturnType<typeof call>, limit: number): Promise<void> {
  let attempt = 0;
  await eventually(async () => assert.equal((await probe(attempt++)).headers['x-ratelimit-limit'], String(limit), 'the new limit is served'), 10_000);
}

describe('overrides through the gateway on the embedded store', () => {
  let upstream: TestUpstream;
  let app: RunningSluice;
  before(async () => {
    upstream = await startUpstream();
    app = await start(upstream);
  });
  after(async () => {
    await app?.close();
    await upstream?.close();
  });

  it('an override for an IP on the login route admits more; the longest match wins and other clients keep the inline rule', async () => {
    assert.equal(await admitted(5, () => login(app, '203.0.113.7')), 3, 'the inline rule: 3 per window');
    assert.equal(await admin(app, 'PUT', overridePath('login-per-ip', 'ip:203.0.113.0/24'), window(10)), 200);
    assert.equal(await admin(app, 'PUT', overridePath('login-per-ip', 'ip:203.0.113.9'), window(6)), 200);
    await limitSeen((i) => login(app, `203.0.113.${100 + i}`), 10);
    await limitSeen(() => login(app, '203.0.113.9'), 6);
    assert.equal(await admitted(12, () => login(app, '203.0.113.50')), 10, 'the /24 override: 10 per window');
    assert.equal(await admitted(12, () => login(app, '198.51.100.1')), 3, 'no override: still 3');
    assert.equal(await admitted(5, () => login(app, '2001:db8::1')), 3, 'an IPv6 client: the inline rule');
    assert.equal(await admin(app, 'PUT', overridePath('login-per-ip', 'ip:2001:db8:1::/48'), window(8)), 200);
    await limitSeen((i) => login(app, `2001:db8:1:${i.toString(16)}::1`), 8);
  });

  it("the decision service's /decide serves the same overrides", async () => {
    const decide = (ip: string) =>
      call(`${app.decisionUrl}/decide`, { headers: { 'x-original-method': 'POST', 'x-original-uri': '/login', 'x-forwarded-for': ip } });
    assert.equal((await decide('198.18.0.1')).headers['x-ratelimit-limit'], '3', 'the inline rule');
    assert.equal(await admin(app, 'PUT', overridePath('login-per-ip', 'ip:198.18.0.0/15'), window(5)), 200);
    await limitSeen((i) => decide(`198.19.0.${i % 250}`), 5);
    assert.equal(await admitted(8, () => decide('198.18.7.7')), 5);
  });

  it("a keyed tenant's override beats its tenant × route rule, and deleting it brings the rule back", async () => {
    assert.equal(await admin(app, 'PUT', '/rules/shop-a/orders', window(3)), 200);
    await limitSeen(() => orders(app, SHOP_A), 3);
    assert.equal(await admin(app, 'PUT', overridePath('orders', 'tenant:shop-a'), window(7)), 200);
    await limitSeen(() => orders(app, SHOP_A), 7);
    assert.equal((await orders(app, SHOP_B)).headers['x-ratelimit-limit'], '2', 'shop-b keeps the default rule');
    assert.equal(await admin(app, 'DELETE', overridePath('orders', 'tenant:shop-a')), 204);
    await limitSeen(() => orders(app, SHOP_A), 3);
  });
});

describe('overrides through two gateways on one PostgreSQL', () => {
  let pg: PostgresHost;
  let upstream: TestUpstream;
  let a: RunningSluice;
  let b: RunningSluice;
  before(async () => {
    [pg, upstream] = await Promise.all([postgresForFile(), startUpstream()]);
    const database = await createDatabase(pg);
    a = await start(upstream, database);
    b = await start(upstream, database);
  });
  after(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    await Promise.allSettled([pg?.stop(), upstream?.close()]);
  });

  it('an override PUT on A is served by B, and a DELETE on A is too', async () => {
    assert.equal(await admin(a, 'PUT', overridePath('login-per-ip', 'ip:192.0.2.0/24'), window(9)), 200);
    await limitSeen((i) => login(b, `192.0.2.${i % 250}`), 9);
    assert.equal(await admin(a, 'DELETE', overridePath('login-per-ip', 'ip:192.0.2.0/24')), 204);
    await limitSeen((i) => login(b, `192.0.2.${i % 250}`), 3);
  });
});
