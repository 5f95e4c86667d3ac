// `unknownKeys: default-rule`: a key no table knows gets a tenant of its own,
// derived from the key's hash, so it can never spend a named tenant's limit and
// never put raw key text (braces, colons) into a Redis key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { ConfigError } from '../../src/config/config-error.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const yaml = `
routes: [{ id: orders, path: /orders, upstream: '\${UP}' }]
tenants: { unknownKeys: default-rule, keys: [{ key: vip-key-0001, tenant: vip }] }
defaultRule: { policy: token_bucket, capacity: 5, refillPerSecond: 0.001 }
rules:
  - { tenant: vip, route: '*', policy: token_bucket, capacity: 1000, refillPerSecond: 0.001 }
  - { tenant: gold, route: orders, policy: token_bucket, capacity: 500, refillPerSecond: 1 }
store: { type: redis, url: '\${REDIS}', deadlineMs: 2000 } # a loaded test machine must not send decisions to the fallback
`;

describe('unknown keys under default-rule', () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  let gateway: RunningSluice;
  const order = (key: string) => call(`${gateway.url}/orders`, { headers: { 'x-api-key': key } });

  before(async () => {
    [redis, upstream] = await Promise.all([startRedis(), startUpstream()]);
    gateway = await startGateway(yaml, { UP: upstream.url, REDIS: redis.url });
  });
  after(async () => {
    await gateway?.close();
    await Promise.allSettled([upstream?.close(), redis?.stop()]);
  });

  it('a real key gets its tenant’s rule', async () => {
    const reply = await order('vip-key-0001');
    assert.equal(reply.status, 200);
    assert.equal(reply.headers['x-ratelimit-limit'], '1000');
  });

  it('a key equal to a tenant id, keyed or only named in a rule, gets the default rule in its own bucket', async () => {
    for (const key of ['vip', 'gold']) {
      const replies = [];
      for (let i = 0; i < 6; i++) replies.push(await order(key));
      assert.deepEqual(
        replies.map((r) => r.status),
        [200, 200, 200, 200, 200, 429],
        key,
      );
      assert.equal(replies[0]!.headers['x-ratelimit-limit'], '5', key);
    }
    // The named tenants' buckets were never touched.
    assert.equal((await order('vip-key-0001')).headers['x-ratelimit-remaining'], '998');
  });

  it('a key with braces or colons is served under the default rule, and no raw key reaches Redis', async () => {
    const keys = ['{vip}', 'a:b}:{c', 'rl:{vip}:orders'];
    for (const key of keys) {
      const reply = await order(key);
      assert.equal(reply.status, 200, key);
      assert.equal(reply.headers['x-ratelimit-limit'], '5', key);
    }
    const client = redis.client();
    const stored = await client.keys('rl:*');
    client.disconnect();
    // vip's hash, and one for each of the five unknown keys sent in this file.
    assert.equal(stored.length, 6, stored.join(' '));
    for (const name of stored) {
      assert.match(name, /^rl:\{(vip|~[0-9a-f]{32})\}/, `unexpected Redis key ${name}`);
      assert.ok(!name.includes('gold') && !name.includes('a:b'), `raw key text in ${name}`);
    }
  });

  it('named tenants cannot use the reserved prefix', () => {
    const bad = yaml.replace("tenant: gold", "tenant: '~gold'");
    assert.throws(() => parseConfig(bad, { source: 't.yaml', env: { UP: 'http://127.0.0.1:1', REDIS: 'redis://127.0.0.1:1' } }), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(String(error.message), /must not start with ~/);
      return true;
    });
  });
});
