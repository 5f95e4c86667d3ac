// Limits keyed by client IP, header, route and tenant+IP through the real
// gateway over real HTTP, on the memory store and on a real redis-server.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { RunningSluice } from '../../src/app.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import type { ResolvedRule, RuleResolver } from '../../src/rules/types.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, startGateway, startUpstream, type TestUpstream, tally } from '../helpers/gateway-support.js';

const KEYED = { 'x-api-key': 'key-shop-a-0001' };
const OTHER = { 'x-api-key': 'key-shop-b-0002' };

const config = (trusted: string) => `
routes:
  - id: login
    methods: [POST]
    path: /login
    upstream: \${UP}
    anonymous: true
    limits: [{ id: login-per-ip, key: ip, rule: { policy: leaky_bucket, ratePerSecond: 0.01, burst: 2, nodelay: true } }]
  - id: me
    path: /me
    upstream: \${UP}
    limits: [{ id: per-user, key: { header: X-User-Id }, rule: { policy: fixed_window, limit: 2, windowMs: 600000 } }]
  - id: search
    path: /search
    upstream: \${UP}
    limits: [{ id: search-ceiling, key: route, rule: { policy: token_bucket, capacity: 3, refillPerSecond: 0.001 } }]
  - id: bulk
    path: /bulk
    upstream: \${UP}
    cost: 5
    limits: [{ id: bulk-tenant-ip, key: tenant+ip, rule: { policy: token_bucket, capacity: 10, refillPerSecond: 0.001 } }]
  - id: orders
    path: /orders
    upstream: \${UP}
    cost: 2
tenants:
  keys:
    - { key: key-shop-a-0001, tenant: shop-a }
    - { key: key-shop-b-0002, tenant: shop-b }
defaultRule: { policy: token_bucket, capacity: 4, refillPerSecond: 0.001 }
headers: { ietf: true }
clientIp: { trustedProxies: [${trusted}] }
`;

/** Every bucket hash in Redis with its fields; each must expire. */
async function bucketsIn(redis: RedisServer): Promise<Record<string, string[]>> {
  const client = redis.client();
  try {
    const out: Record<string, string[]> = {};
    for (const key of (await client.keys('rl:*')).sort()) {
      assert.ok((await client.pttl(key)) > 0, `${key} has a TTL`);
      out[key] = await client.hkeys(key);
    }
    return out;
  } finally {
    client.disconnect();
  }
}

const statuses = async (times: number, url: string, options: Parameters<typeof call>[1]) => {
  const out: number[] = [];
  for (let i = 0; i < times; i++) out.push((await call(url, options)).status);
  return out;
};

for (const kind of ['memory', 'redis'] as const) {
  describe(`limit keys through the gateway on the ${kind} store`, () => {
    let redis: RedisServer | undefined;
    let upstream: TestUpstream;
    let gateway: RunningSluice | undefined;
    const start = async (trusted = '', options = {}) => {
      if (redis) {
        const client = redis.client();
        await client.flushall();
        client.disconnect();
      }
      const store = redis ? `store: { type: redis, url: ${redis.url}, deadlineMs: 2000 }\n` : '';
      gateway = await startGateway(config(trusted) + store, { UP: upstream.url }, options);
      return gateway.url;
    };
    before(async () => {
      if (kind === 'redis') redis = await startRedis();
      upstream = await startUpstream();
    });
    afterEach(() => gateway?.close());
    after(async () => {
      await upstream.close();
      await redis?.stop();
    });

    it('limits an anonymous route per client IP: no key needed, 429 with Retry-After and the limit id', async () => {
      const url = await start();
      const replies = [];
      for (let i = 0; i < 4; i++) replies.push(await call(`${url}/login`, { method: 'POST' }));
      assert.deepEqual(replies.map((r) => r.status), [200, 200, 200, 429]);
      assert.equal(replies[3]?.headers['retry-after'], '100');
      assert.equal(replies[0]?.headers['ratelimit-policy'], '"login-per-ip";q=3;w=300');
      assert.match(String(replies[3]?.headers.ratelimit), /^"login-per-ip";r=0;t=100$/);
      // a keyed route still answers 401 without a key, and a keyless request for no route is still a 401 before a 404
      assert.equal((await call(`${url}/orders`)).status, 401);
      assert.equal((await call(`${url}/nowhere`)).status, 401);
      assert.equal((await call(`${url}/nowhere`, { headers: KEYED })).status, 404);
      // an anonymous route ignores a key, even an unknown one
      assert.equal((await call(`${url}/login`, { method: 'POST', headers: { 'x-api-key': 'not-a-key-at-all' } })).status, 429);
    });

    it('ignores X-Forwarded-For from a peer that is not a trusted proxy', async () => {
      const url = await start();
      const spoofed = [];
      for (let i = 0; i < 4; i++) spoofed.push((await call(`${url}/login`, { method: 'POST', headers: { 'x-forwarded-for': `198.51.100.${i}` } })).status);
      assert.deepEqual(spoofed, [200, 200, 200, 429], 'a new X-Forwarded-For per request buys no new bucket');
    });

    it('keys by the forwarded address when the peer is a trusted proxy', async () => {
      const url = await start('127.0.0.1/32');
      const from = (ip: string) => ({ method: 'POST', headers: { 'x-forwarded-for': `6.6.6.6, ${ip}` } });
      assert.deepEqual(await statuses(4, `${url}/login`, from('203.0.113.7')), [200, 200, 200, 429]);
      assert.deepEqual(await statuses(3, `${url}/login`, from('2001:db8:0:1::1')), [200, 200, 200]);
      // the same /64: the same bucket
      assert.deepEqual(await statuses(1, `${url}/login`, from('2001:db8:0:1::ffff')), [429]);
      assert.deepEqual(await statuses(1, `${url}/login`, from('::ffff:203.0.113.7')), [429]);
      // metrics name the limit, never the address
      const metrics = await resilienceRegistry.getSingleMetricAsString('sluice_limit_decisions_total');
      assert.match(metrics, /sluice_limit_decisions_total\{limit="login-per-ip",outcome="limited"\} [1-9]/);
      assert.match(metrics, /sluice_limit_decisions_total\{limit="login-per-ip",outcome="allowed"\} [1-9]/);
      assert.ok(!/203\.0\.113|2001|~ip/.test(metrics), metrics);
      if (redis) {
        assert.deepEqual(await bucketsIn(redis), { 'rl:{~ip.203.0.113.7}': ['login-per-ip'], 'rl:{~ip6.20010db800000001}': ['login-per-ip'] });
      }
    });

    it('logs a refusal with the limit id, never the address or the header value', async () => {
      const lines: string[] = [];
      const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(line) });
      const url = await start('127.0.0.1/32', { logger });
      await statuses(4, `${url}/login`, { method: 'POST', headers: { 'x-forwarded-for': '203.0.113.9' } });
      await statuses(3, `${url}/me`, { headers: { ...KEYED, 'x-user-id': 'carol' } });
      const refusals = lines.filter((line) => line.includes('rate limited')).map((line) => JSON.parse(line));
      assert.deepEqual(refusals.map((entry) => [entry.route, entry.limit, entry.tenant]), [['login', 'login-per-ip', undefined], ['me', 'per-user', 'shop-a']]);
      const all = lines.join('');
      assert.ok(!all.includes('203.0.113.9') && !all.includes('carol') && !all.includes('~ip') && !all.includes('~h.'), all);
    });

    it('keys by a hashed request header, and answers 400 when it is missing', async () => {
      const url = await start();
      const missing = await call(`${url}/me`, { headers: KEYED });
      assert.equal(missing.status, 400);
      assert.deepEqual(JSON.parse(missing.body), { error: 'missing_limit_header' });
      const as = (user: string) => ({ headers: { ...KEYED, 'x-user-id': user } });
      assert.deepEqual(await statuses(3, `${url}/me`, as('alice@example.com')), [200, 200, 429]);
      assert.deepEqual(await statuses(1, `${url}/me`, as('bob')), [200]);
      if (redis) {
        const buckets = await bucketsIn(redis);
        assert.equal(Object.keys(buckets).length, 2);
        for (const [key, fields] of Object.entries(buckets)) {
          assert.match(key, /^rl:\{~h\.[0-9a-f]{32}\}$/);
          assert.deepEqual(fields, ['per-user']);
        }
      }
    });

    it('keys a route ceiling by the route alone, across tenants', async () => {
      const url = await start();
      const replies = [...(await statuses(2, `${url}/search`, { headers: KEYED })), ...(await statuses(2, `${url}/search`, { headers: OTHER }))];
      assert.deepEqual(replies, [200, 200, 200, 429]);
    });

    it('keys tenant+ip in the tenant slot, and charges the route cost', async () => {
      const url = await start('127.0.0.1/32');
      const from = (headers: Record<string, string>, ip: string) => ({ headers: { ...headers, 'x-forwarded-for': ip } });
      const first = await call(`${url}/bulk`, from(KEYED, '192.0.2.1'));
      assert.equal(first.headers['x-ratelimit-remaining'], '5', 'one request of cost 5 takes 5 of 10');
      assert.deepEqual(await statuses(2, `${url}/bulk`, from(KEYED, '192.0.2.1')), [200, 429]);
      assert.deepEqual(await statuses(1, `${url}/bulk`, from(KEYED, '192.0.2.2')), [200], 'another address of the tenant');
      assert.deepEqual(await statuses(1, `${url}/bulk`, from(OTHER, '192.0.2.1')), [200], 'another tenant at the same address');
      if (redis) {
        // a key per address, in the tenant's slot (a field of the tenant's hash would never expire while the tenant is busy)
        assert.deepEqual(await bucketsIn(redis), {
          'rl:{shop-a}~ip.192.0.2.1.bulk-tenant-ip': ['_'],
          'rl:{shop-a}~ip.192.0.2.2.bulk-tenant-ip': ['_'],
          'rl:{shop-b}~ip.192.0.2.1.bulk-tenant-ip': ['_'],
        });
      }
    });

    it('keeps the default limit per tenant, keyed as before, with the cost applied', async () => {
      const url = await start();
      assert.deepEqual(await statuses(3, `${url}/orders`, { headers: KEYED }), [200, 200, 429]);
      if (redis) {
        assert.deepEqual(await bucketsIn(redis), { 'rl:{shop-a}': ['orders'] });
      }
    });

    it("answers 503 cost_exceeds_capacity, never a 500, when the store's rule is below the cost", async () => {
      const small: ResolvedRule = { rule: { policy: 'token_bucket', capacity: 1, refillPerSecond: 1 }, match: 'default', version: 'small' };
      const rules: RuleResolver = { resolve: () => small };
      const url = await start('', { rules });
      const replies = [];
      for (let i = 0; i < 3; i++) replies.push(await call(`${url}/orders`, { headers: KEYED }));
      assert.deepEqual(tally(replies), { 503: 3 });
      assert.deepEqual(JSON.parse(replies[0]!.body), { error: 'cost_exceeds_capacity' });
      // errors.md: every 503 carries Retry-After; this one takes an operator to clear.
      assert.equal(replies[0]!.headers['retry-after'], '60');
    });
  });
}
