// A route with several limits (its own and a global one) through the real
// gateway over real HTTP: X-RateLimit-* and Retry-After from the governing
// limit, the IETF fields listing every limit, per-limit metrics, shaping by
// the longest delay; on the memory store and on a real redis-server. The
// route's own limit is a sliding log: a fixed window is aligned to the
// clock, so its Retry-After depends on when the test runs.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const KEY = { 'x-api-key': 'key-shop-a-0001' };

const YAML = `
globalLimits:
  - { id: several-global, key: ip, rule: { policy: token_bucket, capacity: 10, refillPerSecond: 0.001 } }
routes:
  - id: reports
    path: /reports
    upstream: \${UP}
    limits:
      - { id: several-small, key: tenant, rule: { policy: sliding_window_log, limit: 3, windowMs: 600000 } }
  - id: shaped
    path: /shaped
    upstream: \${UP}
    limits:
      - { id: several-shaped, key: tenant, rule: { policy: leaky_bucket, ratePerSecond: 5, burst: 5, delay: 1 } }
tenants:
  keys: [{ key: key-shop-a-0001, tenant: shop-a }]
headers: { ietf: true }
`;

for (const store of ['memory', 'redis'] as const) {
  describe(`several limits per request through the gateway (${store})`, () => {
    let upstream: TestUpstream;
    let redis: RedisServer | undefined;
    let app: RunningSluice;
    before(async () => {
      upstream = await startUpstream();
      const env: Record<string, string> = { UP: upstream.url };
      if (store === 'redis') {
        redis = await startRedis();
        env.SLUICE_REDIS_URL = redis.url;
        env.SLUICE_STORE_DEADLINE_MS = '2000';
      }
      app = await startGateway(YAML, env);
    });
    after(async () => {
      await app.close();
      await upstream.close();
      await redis?.stop();
    });

    it('success: X-RateLimit-* from the limit closest to exhaustion; RateLimit-Policy and RateLimit list every limit', async () => {
      const reply = await call(`${app.url}/reports`, { headers: KEY });
      assert.equal(reply.status, 200);
      assert.equal(reply.headers['x-ratelimit-limit'], '3');
      assert.equal(reply.headers['x-ratelimit-remaining'], '2');
      assert.equal(reply.headers['ratelimit-policy'], '"several-small";q=3;w=600, "several-global";q=10;w=10000');
      assert.match(String(reply.headers.ratelimit), /^"several-small";r=2;t=\d+, "several-global";r=9;t=\d+$/);
    });

    it('refusal: 429 with Retry-After from the refusing limit; the other limit is not charged', async () => {
      await call(`${app.url}/reports`, { headers: KEY });
      await call(`${app.url}/reports`, { headers: KEY });
      const refused = await call(`${app.url}/reports`, { headers: KEY });
      const again = await call(`${app.url}/reports`, { headers: KEY });
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['x-ratelimit-limit'], '3');
      assert.equal(refused.headers['x-ratelimit-remaining'], '0');
      assert.ok(Number(refused.headers['retry-after']) > 60, 'the window refuses for minutes, not the global bucket');
      // 3 admitted in all: the global limit holds 7 through the refusal.
      assert.match(String(refused.headers.ratelimit), /^"several-small";r=0;t=\d+, "several-global";r=7;t=\d+$/);
      // On Redis the next refusal comes from the negative cache at once: the global limit is not consulted, so not listed.
      const expected = store === 'memory' ? /^"several-small";r=0;t=\d+, "several-global";r=7;t=\d+$/ : /^"several-small";r=0;t=\d+$/;
      assert.match(String(again.headers.ratelimit), expected);
      const metrics = await resilienceRegistry.getSingleMetricAsString('sluice_limit_decisions_total');
      assert.match(metrics, /sluice_limit_decisions_total\{limit="several-small",outcome="limited"\} [1-9]/);
      assert.match(metrics, /sluice_limit_decisions_total\{limit="several-global",outcome="not_charged"\} [1-9]/);
      assert.match(metrics, /sluice_limit_decisions_total\{limit="several-global",outcome="allowed"\} [1-9]/);
    });

    it('shaping: a delayed limit beside an undelayed one holds the request (the longest delay)', async () => {
      const replies = await Promise.all(Array.from({ length: 3 }, () => call(`${app.url}/shaped`, { headers: KEY })));
      assert.deepEqual(replies.map((r) => r.status), [200, 200, 200]);
      assert.ok(replies.every((r) => r.headers['ratelimit-policy'] === '"several-shaped";q=6;w=2, "several-global";q=10;w=10000'));
    });
  });
}
