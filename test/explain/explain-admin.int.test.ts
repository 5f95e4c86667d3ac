// GET /explain on a running gateway (memory store and a real redis-server):
// the bucket explain names is the one a real request through the gateway
// charges, its state is read by a peek that charges nothing, the endpoint needs
// a token (any role), bad input is a 400 naming the field, and the sample's
// API key is never echoed back.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { run } from '../../src/cli/explain-command.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import type { Explanation, LimitExplanation } from '../../src/explain/explain.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';

const TOKEN = 'explain-admin-token-0123456789';
const KEY = 'key-shop-a-0001';

const YAML = `
routes:
  - id: orders
    path: /orders
    upstream: \${UP}
    limits:
      - { id: per-tenant, key: tenant, rule: { policy: token_bucket, capacity: 5, refillPerSecond: 0.001 } }
      - { id: per-user, key: { header: X-User-Id }, rule: { policy: fixed_window, limit: 4, windowMs: 600000 } }
      - { id: per-ip, key: ip, rule: { policy: sliding_window_log, limit: 6, windowMs: 600000 } }
  - id: reports
    path: /reports
    upstream: \${UP}
tenants:
  keys:
    - { key: ${KEY}, tenant: shop-a }
defaultRule: { policy: gcra, capacity: 3, refillPerSecond: 0.001 }
`;

for (const kind of ['memory', 'redis'] as const) {
  describe(`GET /explain on the ${kind} store`, () => {
    let redis: RedisServer | undefined;
    let upstream: TestUpstream;
    let app: RunningSluice;
    let dir: string;
    let readToken: string;
    let text: string;
    const admin = async (path: string, token: string | null = TOKEN) => {
      const reply = await call(`${app.adminUrl}${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
      return { status: reply.status, text: reply.body, body: JSON.parse(reply.body) };
    };
    const explain = async (query: Record<string, string | string[]>): Promise<Explanation> => {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) for (const one of [value].flat()) params.append(name, one);
      const reply = await admin(`/explain?${params}`, readToken);
      assert.equal(reply.status, 200, reply.text);
      assert.ok(!reply.text.includes(KEY), 'the API key is never echoed');
      return reply.body as Explanation;
    };
    const limit = (out: Explanation, id: string): LimitExplanation => out.limits.find((entry) => entry.id === id)!;
    const remaining = (entry: LimitExplanation) => (entry.state as { remaining: number }).remaining;
    const SAMPLE = { path: '/orders', header: [`X-Api-Key: ${KEY}`, 'X-User-Id: alice'], ip: '127.0.0.1' };

    before(async () => {
      if (kind === 'redis') redis = await startRedis();
      upstream = await startUpstream();
      dir = mkdtempSync(join(tmpdir(), 'sluice-explain-'));
      const store = redis ? `store: { type: redis, url: ${redis.url}, deadlineMs: 2000 }\n` : '';
      const env = { UP: upstream.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_DECISION_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir };
      text = YAML + store;
      app = await startGateway(text, env, { ruleStore: true, admin: true });
      const created = await call(`${app.adminUrl}/tokens`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'viewer', role: 'read' }) });
      readToken = JSON.parse(created.body).token;
    });
    after(async () => {
      await app.close();
      await upstream.close();
      await redis?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('names the buckets a real request charges, and reading them charges nothing', async () => {
      const before = await explain(SAMPLE);
      assert.equal(before.route, 'orders');
      assert.equal(before.identity.tenant, 'shop-a');
      assert.deepEqual(before.limits.map(remaining), [5, 4, 6]);
      assert.deepEqual((await explain(SAMPLE)).limits.map(remaining), [5, 4, 6], 'a second explain charged nothing');
      const sent = await call(`${app.url}/orders`, { headers: { 'x-api-key': KEY, 'x-user-id': 'alice' } });
      assert.equal(sent.status, 200);
      const after = await explain(SAMPLE);
      assert.deepEqual(after.limits.map(remaining), [4, 3, 5], 'each bucket explain names is the one the gateway charged');
      // Another user's header bucket and the default-rule route are untouched.
      assert.equal(remaining(limit(await explain({ ...SAMPLE, header: [`X-Api-Key: ${KEY}`, 'X-User-Id: bob'] }), 'per-user')), 4);
      if (redis) await assertInRedis(redis, after.limits);
    });

    it('a route with no limits of its own: the tenant under the default rule', async () => {
      const out = await explain({ path: '/reports', header: [`X-Api-Key: ${KEY}`] });
      const only = out.limits[0]!;
      assert.deepEqual(only.source, { from: 'default-rule' });
      assert.equal(remaining(only), 3);
    });

    it('needs a token; any role may read it', async () => {
      assert.equal((await admin('/explain?path=/orders', null)).status, 401);
      assert.equal((await admin('/explain?path=/orders', readToken)).status, 200);
      assert.equal((await admin('/explain?path=/orders', TOKEN)).status, 200);
    });

    it('answers 400 naming the field on bad input', async () => {
      for (const [query, field] of [
        ['', 'path'],
        ['path=orders', 'path'],
        ['path=/orders&ip=300.1.1.1', 'ip'],
        ['path=/orders&header=nocolon', 'header[0]'],
        ['path=/orders&method=G%20T', 'method'],
        ['path=/orders&pathh=/x', 'pathh'],
        ['path=/orders&path=/reports', 'path'],
      ]) {
        const reply = await admin(`/explain?${query}`, readToken);
        assert.equal(reply.status, 400, query);
        assert.equal(reply.body.error.field, field, query);
      }
    });

    it('sluice explain --admin: the same answer as text, each bucket now', async () => {
      let stdout = '';
      const io = {
        out: (text: string) => {
          stdout += text;
        },
        err: (text: string) => assert.fail(text),
        env: {},
      };
      const args = ['--admin', app.adminUrl!, '--token', readToken, '--path', '/reports', '--header', `X-Api-Key: ${KEY}`, '--ip', '127.0.0.1'];
      assert.equal(await run(args, io), 0);
      assert.match(stdout, /limit reports: applies, counted per tenant \(shop-a\)/);
      assert.match(stdout, /now {4}3\/3 remaining, reset in 0 ms \((memory|redis 127\.0\.0\.1:\d+)\)/);
      assert.ok(!stdout.includes(KEY));
    });

    it('follows a config reload: the gateway and explain read the same config', async () => {
      const next = parseConfig(text.replace('path: /reports', 'path: /reports/*'), { source: 'test.yaml', env: { UP: upstream.url, SLUICE_LISTEN: '127.0.0.1:0' } });
      assert.equal((await explain({ path: '/reports/q1', header: [`X-Api-Key: ${KEY}`] })).outcome.status, 404);
      app.reconfigure(next);
      assert.equal((await explain({ path: '/reports/q1', header: [`X-Api-Key: ${KEY}`] })).route, 'reports');
      assert.equal((await call(`${app.url}/reports/q1`, { headers: { 'x-api-key': KEY } })).status, 200);
    });

    it('refuses other methods', async () => {
      const reply = await call(`${app.adminUrl}/explain?path=/orders`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(reply.status, 405);
    });
  });
}

/** Each rate limit's Redis key (and field) is where the bucket is. */
async function assertInRedis(redis: RedisServer, limits: readonly LimitExplanation[]): Promise<void> {
  const client = redis.client();
  try {
    for (const entry of limits) {
      const { redisKey, field } = entry.bucket!;
      if (field === undefined) assert.equal(await client.exists(redisKey), 1, `${entry.id}: ${redisKey} exists`);
      else assert.equal(await client.hexists(redisKey, field), 1, `${entry.id}: ${redisKey} has field ${field}`);
    }
  } finally {
    client.disconnect();
  }
}
