// GET /tenants/{id}/usage on running gateways: each limit that counts the
// tenant, what is left and when it resets (a peek: reading charges nothing),
// and what the tenant consumed over the last hour and day. On the memory store
// this instance's counts; on a real redis-server two instances' counts add up,
// and a batch sent twice (a timed-out write resent) is applied once. Bad input
// is a 400 naming the field; the endpoint needs a token.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { LimitUsage, TenantUsage } from '../../src/admin/usage-handler.js';
import type { RunningSluice } from '../../src/app.js';
import type { CliIo } from '../../src/cli/cli-io.js';
import { run as usageCli } from '../../src/cli/usage-command.js';
import { connectRedis } from '../../src/stores/redis/connect.js';
import { RedisUsageHistory } from '../../src/usage/usage-redis.js';
import { until } from '../helpers/poll.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';

const TOKEN = 'usage-admin-token-0123456789';
const KEY = 'key-shop-a-0001';

const YAML = `
globalLimits:
  - { id: per-tenant-day, key: tenant, rule: { policy: fixed_window, limit: 1000, windowMs: 86400000 } }
routes:
  - id: orders
    path: /orders
    upstream: \${UP}
    cost: 2
    limits:
      - { id: orders-rate, key: tenant, rule: { policy: token_bucket, capacity: 6, refillPerSecond: 0.001 } }
      - { id: orders-ip, key: ip, rule: { policy: token_bucket, capacity: 100, refillPerSecond: 1 } }
  - id: login
    path: /login
    upstream: \${UP}
    anonymous: true
    limits: [{ id: login-ip, key: ip, rule: { policy: token_bucket, capacity: 5, refillPerSecond: 1 } }]
tenants:
  keys:
    - { key: ${KEY}, tenant: shop-a }
`;

for (const kind of ['memory', 'redis'] as const) {
  describe(`GET /tenants/{id}/usage on the ${kind} store`, () => {
    let redis: RedisServer | undefined;
    let upstream: TestUpstream;
    const apps: RunningSluice[] = [];
    const dirs: string[] = [];
    const usage = async (tenant: string, token: string | null = TOKEN) => {
      const reply = await call(`${apps[0]!.adminUrl}/tenants/${encodeURIComponent(tenant)}/usage`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
      return { status: reply.status, text: reply.body, body: JSON.parse(reply.body) as TenantUsage & { error?: string; field?: string } };
    };
    const limit = (body: TenantUsage, id: string): LimitUsage => body.limits.find((entry) => entry.id === id)!;

    before(async () => {
      if (kind === 'redis') redis = await startRedis();
      upstream = await startUpstream();
      const store = redis ? `store: { type: redis, url: ${redis.url}, deadlineMs: 2000 }\n` : '';
      // Two instances on Redis (they share the buckets and the usage history); one on the memory store.
      for (let i = 0; i < (redis ? 2 : 1); i++) {
        const dir = mkdtempSync(join(tmpdir(), 'sluice-usage-'));
        dirs.push(dir);
        const env = { UP: upstream.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir };
        apps.push(await startGateway(YAML + store, env, { ruleStore: true, admin: true }));
      }
    });
    after(async () => {
      for (const app of apps) await app.close();
      await upstream.close();
      await redis?.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });

    it("reports each limit that counts the tenant, what is left, when it resets, and the hour's and day's consumption", async () => {
      const fresh = await usage('shop-a');
      assert.equal(fresh.status, 200, fresh.text);
      assert.deepEqual(fresh.body.limits.map((entry) => entry.id).sort(), ['orders-rate', 'per-tenant-day'], 'not the limits keyed by address, nor the anonymous route');
      assert.deepEqual(limit(fresh.body, 'orders-rate').state, { ...limit(fresh.body, 'orders-rate').state, remaining: 6, limit: 6 });
      assert.deepEqual(limit(fresh.body, 'orders-rate').lastHour, { units: 0, requests: 0, refused: 0 });
      assert.equal(fresh.body.scope, kind === 'redis' ? 'cluster' : 'local');

      // Two requests through each instance (cost 2 each: the bucket of 6 holds three), the last ones refused.
      const statuses: number[] = [];
      for (const app of apps) for (let i = 0; i < 2; i++) statuses.push((await call(`${app.url}/orders`, { headers: { 'x-api-key': KEY } })).status);
      const admitted = statuses.filter((status) => status === 200).length;
      const refused = statuses.filter((status) => status === 429).length;
      assert.equal(admitted, Math.min(3, statuses.length));
      await until(async () => limit((await usage('shop-a')).body, 'orders-rate').lastHour?.requests === admitted, 'the instances flushed their counts', 15_000);
      const after = (await usage('shop-a')).body;
      const rate = limit(after, 'orders-rate');
      assert.deepEqual(rate.lastHour, { units: 2 * admitted, requests: admitted, refused });
      assert.deepEqual(rate.lastDay, rate.lastHour);
      assert.deepEqual(limit(after, 'per-tenant-day').lastHour, { units: 2 * admitted, requests: admitted, refused: 0 });
      const state = rate.state as { remaining: number; limit: number; resetAfterMs: number; resetAt: string };
      assert.equal(state.remaining, 6 - 2 * admitted);
      assert.ok(state.resetAfterMs > 0);
      assert.equal(Date.parse(state.resetAt), Date.parse(after.at) + state.resetAfterMs, 'resetAt is the answer time plus resetAfterMs');
      const again = (await usage('shop-a')).body;
      assert.equal((limit(again, 'orders-rate').state as { remaining: number }).remaining, state.remaining, 'reading charged nothing');
    });

    it('sluice usage prints the same, as text or JSON; a missing tenant is a usage error', async () => {
      const cli = async (argv: string[]) => {
        const out: string[] = [];
        const err: string[] = [];
        const io: CliIo = { out: (text) => void out.push(text), err: (text) => void err.push(text), env: { SLUICE_ADMIN_TOKEN: TOKEN } };
        const code = await usageCli([...argv, '--admin', apps[0]!.adminUrl!], io);
        return { code, out: out.join(''), err: err.join('') };
      };
      const api = (await usage('shop-a')).body;
      const text = await cli(['shop-a']);
      assert.equal(text.code, 0, text.err);
      const rate = limit(api, 'orders-rate');
      assert.match(text.out, /^orders-rate \(route orders; per tenant from config\)$/m);
      assert.match(text.out, new RegExp(`^  last hour  ${rate.lastHour!.units} units in ${rate.lastHour!.requests} requests, ${rate.lastHour!.refused} refused$`, 'm'));
      assert.match(text.out, /^per-tenant-day \(global, routes orders; per tenant from config\)$/m);
      const json = await cli(['shop-a', '--json']);
      assert.deepEqual(JSON.parse(json.out).limits.map((entry: LimitUsage) => entry.id), api.limits.map((entry) => entry.id));
      const missing = await cli([]);
      assert.equal(missing.code, 2);
      assert.match(missing.err, /name the tenant/);
      const bad = await cli(['bad{id}']);
      assert.equal(bad.code, 1);
      assert.match(bad.err, /tenant/);
    });

    it('a tenant with no traffic gets its limits and zeros; a bad id is a 400 naming the field; no token, no answer', async () => {
      const other = await usage('shop-z');
      assert.equal(other.status, 200);
      assert.deepEqual(limit(other.body, 'orders-rate').lastDay, { units: 0, requests: 0, refused: 0 });
      const bad = await usage('bad{tenant}');
      assert.equal(bad.status, 400);
      assert.match(bad.text, /tenant/);
      assert.equal((await usage('shop-a', null)).status, 401);
    });
  });
}

describe('the usage history on a real redis-server', () => {
  it('a batch sent again with the same number is applied once; another number adds', async () => {
    const redis = await startRedis();
    const client = connectRedis({ url: redis.url });
    try {
      const history = new RedisUsageHistory(client);
      const start = Math.floor(Date.now() / 1000 / 300) * 300;
      const batch = { instance: 'i-1', seq: 7, start, tenants: new Map([['shop-a', new Map([['per-tenant', { units: 5, requests: 2, refused: 1 }]])]]) };
      await history.add(batch);
      await history.add(batch);
      let read = await history.read('shop-a', Date.now() / 1000);
      assert.deepEqual(read.lastHour.get('per-tenant'), { units: 5, requests: 2, refused: 1 });
      await history.add({ ...batch, seq: 8 });
      await history.add({ ...batch, instance: 'i-2', seq: 0 });
      read = await history.read('shop-a', Date.now() / 1000);
      assert.deepEqual(read.lastDay.get('per-tenant'), { units: 15, requests: 6, refused: 3 });
      assert.ok((await client.pttl(`sluice:usage:{shop-a}:5m:${start}`)) > 0, 'the buckets expire');
    } finally {
      client.disconnect();
      await redis.stop();
    }
  });
});
