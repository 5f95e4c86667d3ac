// A flood from thousands of random client addresses (IPv4 and IPv6 /128s)
// through the real gateway: the memory store keeps at most maxKeys buckets,
// and on a real Redis every bucket key expires.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { floodConfig, ipFlood } from '../../bench/lib/ip-flood.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';

const FLOOD = 3_000;

describe('a flood of random client IPs', () => {
  let upstream: TestUpstream;
  let redis: RedisServer;
  before(async () => {
    upstream = await startUpstream();
    redis = await startRedis();
  });
  after(async () => {
    await upstream.close();
    await redis.stop();
  });

  it('keeps at most maxKeys buckets on the memory store', async () => {
    const store = new MemoryStore({ maxKeys: 500 });
    const gateway = await startGateway(floodConfig(upstream.url, ''), {}, { store });
    try {
      const result = await ipFlood(`${gateway.url}/login`, FLOOD, 32);
      assert.deepEqual(result, { statuses: { 200: FLOOD }, errors: 0 }, 'every address is new: every request passes');
      assert.ok(store.size <= 500, `${store.size} buckets`);
      assert.ok(store.size >= 400, `${store.size} buckets: the store did hold the flood's buckets`);
    } finally {
      await gateway.close();
    }
  });

  it('leaves one bucket key per address on Redis, each with a TTL', async () => {
    // 0.01/s: a used bucket lives 100 s, so all of them are still there to count
    const gateway = await startGateway(floodConfig(upstream.url, `store: { type: redis, url: ${redis.url}, deadlineMs: 2000 }`, 0.01));
    const client = redis.client();
    try {
      const result = await ipFlood(`${gateway.url}/login`, FLOOD, 32);
      assert.equal(result.errors, 0);
      assert.equal(result.statuses[200], FLOOD);
      const keys = await client.keys('rl:*');
      // random /128s fall into random /64s: one key per request, bar the rare repeated IPv4
      assert.ok(keys.length >= FLOOD - 10 && keys.length <= FLOOD, `${keys.length} keys`);
      const ttls = await Promise.all(keys.map((key) => client.pttl(key)));
      const without = ttls.filter((ttl) => ttl <= 0).length;
      assert.equal(without, 0, 'every bucket key expires');
      // one unit at 0.01/s drains in 100 s: the key lives no longer
      assert.ok(Math.max(...ttls) <= 100_000, `longest TTL ${Math.max(...ttls)} ms`);
      for (const key of keys) assert.match(key, /^rl:\{~ip6?\.[0-9a-f.]+\}$/);
    } finally {
      client.disconnect();
      await gateway.close();
    }
  });
});
