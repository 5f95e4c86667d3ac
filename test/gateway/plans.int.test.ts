// examples/plans.yaml through the real gateway over real HTTP, on the memory
// store and on a real redis-server: plans made through the admin API (as the
// example's comments do with the CLI), a free tenant refused before a pro one,
// precedence (override > own rule > plan > default; a plan's limit of an id
// over the limit's inline rule), which rule applied, and a bucket that keeps
// its state when its tenant moves to another plan (polled, never timed).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { eventually } from '../helpers/poll.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const TOKEN = 'plans-admin-token-0123456789abcdef';
const EXAMPLE = readFileSync(join(import.meta.dirname, '../../examples/plans.yaml'), 'utf8');
const key = (tenant: string) => ({ 'x-api-key': `${tenant}-demo-key` });

async function admin(app: RunningSluice, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const reply = await call(`${app.adminUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: reply.status, body: reply.body ? JSON.parse(reply.body) : {} };
}

async function statuses(url: string, tenant: string, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push((await call(url, { headers: key(tenant) })).status);
  return out;
}

const bucket = (capacity: number) => ({ policy: 'token_bucket', capacity, refillPerSecond: 0.001 });

for (const kind of ['memory', 'redis'] as const) {
  describe(`examples/plans.yaml on the ${kind} store`, () => {
    let redis: RedisServer | undefined;
    let upstream: TestUpstream;
    let app: RunningSluice | undefined;
    const dirs: string[] = [];
    const start = async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-plans-'));
      dirs.push(dir);
      if (redis) {
        const client = redis.client();
        await client.flushall();
        client.disconnect();
      }
      const store = redis ? `store: { type: redis, url: ${redis.url}, deadlineMs: 2000 }\n` : '';
      const env = { UPSTREAM_URL: upstream.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir };
      app = await startGateway(EXAMPLE + store, env, { ruleStore: true, admin: true });
      for (const [plan, rule] of [['free', bucket(5)], ['pro', bucket(100)]] as const) {
        assert.equal((await admin(app, 'POST', '/plans', { name: plan })).status, 201);
        assert.equal((await admin(app, 'PUT', `/plans/${plan}/limits/global`, rule)).status, 200);
      }
      assert.equal((await admin(app, 'PUT', '/plans/pro/limits/limit/reports-daily', { policy: 'fixed_window', limit: 10_000, windowMs: 86_400_000 })).status, 200);
      assert.equal((await admin(app, 'PUT', '/assignments/tenant/shop-a', { plan: 'free' })).status, 200);
      assert.equal((await admin(app, 'PUT', '/assignments/tenant/shop-b', { plan: 'pro' })).status, 200);
      await eventually(async () => assert.equal((await admin(app!, 'GET', '/buckets/shop-b/orders')).body.plan, 'pro'), 1000);
      return app;
    };
    before(async () => {
      if (kind === 'redis') redis = await startRedis();
      upstream = await startUpstream();
    });
    afterEach(() => app?.close());
    after(async () => {
      await upstream.close();
      await redis?.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it('a free tenant is refused after 5, a pro one is not, one on no plan gets the default', async () => {
      const { url } = await start();
      assert.deepEqual(await statuses(`${url}/api/orders`, 'shop-a', 7), [200, 200, 200, 200, 200, 429, 429]);
      assert.deepEqual(new Set(await statuses(`${url}/api/orders`, 'shop-b', 30)), new Set([200]));
      const plain = await call(`${url}/api/orders`, { headers: key('shop-c') });
      assert.equal(plain.headers['x-ratelimit-limit'], '20');
    });

    it("says which rule applied: the plan's, and which plan", async () => {
      const running = await start();
      const inspected = await admin(running, 'GET', '/buckets/shop-a/orders');
      assert.deepEqual([inspected.body.match, inspected.body.plan], ['plan', 'free']);
      assert.deepEqual([(await admin(running, 'GET', '/buckets/shop-c/orders')).body.match, (await admin(running, 'GET', '/buckets/shop-c/orders')).body.plan], ['default', undefined]);
      assert.equal((await admin(running, 'GET', '/buckets/shop-c/orders?plan=pro')).body.plan, 'pro', 'a plan the request names (a JWT claim)');
      assert.equal((await admin(running, 'GET', '/buckets/shop-c/orders?plan=a:b')).status, 400);
    });

    it("a plan's limit of an id replaces the limit's inline rule for its tenants only", async () => {
      const { url } = await start();
      const pro = await call(`${url}/api/reports`, { headers: key('shop-b') });
      const free = await call(`${url}/api/reports`, { headers: key('shop-a') });
      assert.deepEqual([pro.headers['x-ratelimit-limit'], free.headers['x-ratelimit-limit']], ['10000', '100']);
    });

    it("the tenant's own rule, then an override, come before its plan", async () => {
      const running = await start();
      assert.equal((await admin(running, 'PUT', '/rules/shop-a/orders', bucket(7))).status, 200);
      await eventually(async () => assert.equal((await call(`${running.url}/api/orders`, { headers: key('shop-a') })).headers['x-ratelimit-limit'], '7'), 1000);
      assert.equal((await admin(running, 'PUT', '/limits/orders/overrides/tenant:shop-a', bucket(9))).status, 200);
      await eventually(async () => assert.equal((await call(`${running.url}/api/orders`, { headers: key('shop-a') })).headers['x-ratelimit-limit'], '9'), 1000);
    });

    it('a tenant moved to another plan keeps its bucket: what it used stays used', async () => {
      const running = await start();
      const url = `${running.url}/api/orders`;
      assert.deepEqual(await statuses(url, 'shop-a', 3), [200, 200, 200]);
      assert.equal((await admin(running, 'PUT', '/assignments/tenant/shop-a', { plan: 'pro' })).status, 200);
      let reply = await call(url, { headers: key('shop-a') });
      await eventually(async () => {
        reply = await call(url, { headers: key('shop-a') });
        assert.equal(reply.headers['x-ratelimit-limit'], '100');
      }, 1000);
      // A reset bucket would say 99; the kept one counts the 3 used before the move (and the polls since).
      assert.ok(Number(reply.headers['x-ratelimit-remaining']) <= 96, `remaining ${reply.headers['x-ratelimit-remaining']}`);
      // Back down to free: at most its capacity, and what was used still counts: refused at once.
      assert.equal((await admin(running, 'PUT', '/assignments/tenant/shop-a', { plan: 'free' })).status, 200);
      await eventually(async () => assert.equal((await call(url, { headers: key('shop-a') })).status, 429), 1000);
    });
  });
}
