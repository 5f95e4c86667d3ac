// `sluice start` as operators run it: gateways with the rule store and the admin
// API. Two instances on one PostgreSQL and one Redis see each other's changes
// within a second; the embedded store keeps a rule across a restart.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type PostgresHost, postgresForFile } from '../helpers/shared-servers.js';
import { createDatabase } from '../helpers/postgres-db.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { until } from '../helpers/poll.js';

const TOKEN = 'e2e-admin-token-0123456789';
const yaml = (unknownKeys: string) => `
routes:
  - { id: create-order, methods: [POST], path: /orders, upstream: "\${UPSTREAM}" }
tenants: { unknownKeys: ${unknownKeys} }
defaultRule: { policy: token_bucket, capacity: 20, refillPerSecond: 10 }
`;

function admin(app: RunningSluice, method: string, path: string, body?: unknown) {
  return call(`${app.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe('two gateways on one PostgreSQL and one Redis', () => {
  let pg: PostgresHost;
  let redis: RedisServer;
  let upstream: TestUpstream;
  let a: RunningSluice;
  let b: RunningSluice;
  const dirs: string[] = [];

  before(async () => {
    [pg, redis, upstream] = await Promise.all([postgresForFile(), startRedis(), startUpstream()]);
    const database = await createDatabase(pg);
    const start = () => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-e2e-'));
      dirs.push(dir);
      const env = { UPSTREAM: upstream.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATABASE_URL: database, SLUICE_REDIS_URL: redis.url, SLUICE_DATA_DIR: dir };
      return startGateway(yaml('reject'), env, { ruleStore: true, admin: true });
    };
    a = await start();
    b = await start();
  });
  after(async () => {
    await Promise.allSettled([a?.close(), b?.close()]);
    await Promise.allSettled([pg?.stop(), redis?.stop(), upstream?.close()]);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('a key created on A works on B; a rule PUT on A is enforced by B; a key revoked on A is refused by B, each within 1 s', async () => {
    const created = await admin(a, 'POST', '/keys', { tenant: 'shop-a' });
    assert.equal(created.status, 201);
    const { id, key } = JSON.parse(created.body) as { id: string; key: string };
    const order = () => call(`${b.url}/orders`, { method: 'POST', headers: { 'x-api-key': key } });

    await until(async () => (await order()).status === 200, 'the change seen', 1000, 20);

    assert.equal((await admin(a, 'PUT', '/rules/shop-a/create-order', { policy: 'token_bucket', capacity: 7, refillPerSecond: 0.01 })).status, 200);
    await until(async () => (await order()).headers['x-ratelimit-limit'] === '7', 'the change seen', 1000, 20);
    const replies = [];
    for (let i = 0; i < 10; i++) replies.push(await order());
    assert.ok(replies.some((r) => r.status === 429), 'B refuses once the new limit of 7 is spent');

    assert.equal((await admin(a, 'DELETE', `/keys/${id}`)).status, 200);
    await until(async () => (await order()).status === 401, 'the change seen', 1000, 20);
  });

  it('both instances report ready, with the rule store reachable', async () => {
    for (const app of [a, b]) {
      const ready = await call(`${app.adminUrl}/readyz`);
      assert.equal(ready.status, 200);
      assert.equal(JSON.parse(ready.body).rules.storeReachable, true);
    }
  });
});

describe('the embedded rule store', () => {
  it('a rule set through the admin API survives a restart', async () => {
    const upstream = await startUpstream();
    const dir = mkdtempSync(join(tmpdir(), 'sluice-embedded-'));
    const env = { UPSTREAM: upstream.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir };
    try {
      const first = await startGateway(yaml('default-rule'), env, { ruleStore: true, admin: true });
      assert.equal((await admin(first, 'PUT', '/rules/shop-z/*', { policy: 'gcra', capacity: 3, refillPerSecond: 1 })).status, 200);
      const { key } = JSON.parse((await admin(first, 'POST', '/keys', { tenant: 'shop-z' })).body) as { key: string };
      await first.close();

      const second = await startGateway(yaml('default-rule'), env, { ruleStore: true, admin: true });
      try {
        const reply = await call(`${second.url}/orders`, { method: 'POST', headers: { 'x-api-key': key } });
        assert.equal(reply.status, 200);
        assert.equal(reply.headers['x-ratelimit-limit'], '3');
        assert.equal(JSON.parse((await admin(second, 'GET', '/rules/shop-z/*')).body).rule.capacity, 3);
      } finally {
        await second.close();
      }
    } finally {
      await upstream.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('revoking a tenant\'s last key under unknownKeys: default-rule', () => {
  it('neither the revoked key nor the tenant\'s name as a key gets the tenant\'s rule', async () => {
    const upstream = await startUpstream();
    const dir = mkdtempSync(join(tmpdir(), 'sluice-revoke-'));
    const env = { UPSTREAM: upstream.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir };
    const app = await startGateway(yaml('default-rule'), env, { ruleStore: true, admin: true });
    const limitFor = async (apiKey: string) => (await call(`${app.url}/orders`, { method: 'POST', headers: { 'x-api-key': apiKey } })).headers['x-ratelimit-limit'];
    try {
      assert.equal((await admin(app, 'PUT', '/rules/vip/*', { policy: 'token_bucket', capacity: 1000, refillPerSecond: 100 })).status, 200);
      const created = JSON.parse((await admin(app, 'POST', '/keys', { tenant: 'vip' })).body) as { id: string; key: string };
      await until(async () => (await limitFor(created.key)) === '1000', 'the change seen', 1000, 20);
      assert.equal(await limitFor('vip'), '20', 'the name of a keyed tenant is an unknown key');

      assert.equal((await admin(app, 'DELETE', `/keys/${created.id}`)).status, 200);
      await until(async () => (await limitFor(created.key)) === '20', 'the change seen', 1000, 20);
      assert.equal(await limitFor('vip'), '20', 'once its last key is revoked, the name still does not reach vip\'s rule');
    } finally {
      await app.close();
      await upstream.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
