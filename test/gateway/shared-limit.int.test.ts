// Two gateway instances on one real redis-server share one limit: 1,000
// concurrent requests split across both against capacity 20 → exactly 20 pass.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import type { RunningSluice } from '../../src/app.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { startGateway, startUpstream, type TestUpstream, tally } from '../helpers/gateway-support.js';

describe('two gateways on one Redis', () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  let gateways: RunningSluice[];
  let forwarded = 0;

  before(async () => {
    redis = await startRedis();
    upstream = await startUpstream((req, res) => {
      forwarded++;
      req.resume();
      res.end('{}');
    });
    const yaml = `
routes: [{ id: orders, path: /orders, upstream: '\${UP}' }]
tenants: { unknownKeys: default-rule, keys: [{ key: shop-a-key-1, tenant: shop-a }] }
rules: [{ tenant: shop-a, route: orders, policy: token_bucket, capacity: 20, refillPerSecond: 0.001 }]
store: { type: redis, url: '\${REDIS}' }
`;
    gateways = await Promise.all([0, 1].map(() => startGateway(yaml, { UP: upstream.url, REDIS: redis.url })));
  });
  after(async () => {
    await Promise.all(gateways.map((gateway) => gateway.close()));
    await upstream.close();
    await redis.stop();
  });

  it('allows what one gateway would, together', async () => {
    const agent = new Agent({ connections: 100 });
    try {
      const replies = await Promise.all(
        Array.from({ length: 1000 }, async (_, i) => {
          const response = await request(`${gateways[i % 2]!.url}/orders`, { headers: { 'x-api-key': 'shop-a-key-1' }, dispatcher: agent });
          await response.body.dump();
          return { status: response.statusCode, via: i % 2 };
        }),
      );
      // refill is one token per 1,000 s: no refill can happen during the test.
      assert.deepEqual(tally(replies), { 200: 20, 429: 980 });
      assert.equal(forwarded, 20);
      const perGateway = [0, 1].map((via) => replies.filter((reply) => reply.via === via && reply.status === 200).length);
      assert.equal(perGateway[0]! + perGateway[1]!, 20);
    } finally {
      await agent.close();
    }
  });
});
