// The adapters' keys, with the gateway's helpers: `key: 'ip'` over real HTTP
// (an IPv6 client on ::1, the /64 prefix, IPv4-mapped addresses, forwarding
// headers believed only from trusted proxies), and any string key: an API key
// is hashed, a user's id that is not an id (`org:42`) is hashed, never a 400,
// and no raw value reaches a Redis key (addresses are keyed as the gateway keys them).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { sluiceExpress } from '../../src/adapters/express.js';
import { sluiceFastify } from '../../src/adapters/fastify.js';
import { createEngine, type Engine, parseRule } from '../../src/index.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, listenExpress, listenFastify, type Running, silent } from '../helpers/http-apps.js';

const RULE = parseRule({ policy: 'token_bucket', capacity: 2, refillPerSecond: 0.001 });
const statuses = async (url: string, headers: Record<string, string> = {}, n = 3) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await call(url, headers)).status);
  return out;
};

describe('adapter keys on a real Redis', { timeout: 60_000 }, () => {
  let redis: RedisServer;
  let engine: Engine;
  const running: Record<string, Running> = {};

  before(async () => {
    redis = await startRedis();
    engine = createEngine({ redis: { url: redis.url }, logger: silent });
    // Express on the IPv6 loopback: req.ip is ::1.
    const v6 = express();
    v6.use(sluiceExpress({ engine, rule: RULE, route: 'v6', key: 'ip' }));
    v6.use((_req, res) => {
      res.json({ ok: true });
    });
    running.v6 = await listenExpress(v6, '::1');
    // Fastify behind a trusted proxy (the test itself, on 127.0.0.1) and with none.
    const fastify = Fastify();
    await fastify.register(async (scope) => {
      await scope.register(sluiceFastify, { engine, rule: RULE, route: 'proxied', key: 'ip', clientIp: { trustedProxies: ['127.0.0.1/32'] } });
      scope.get('/proxied', async () => ({ ok: true }));
    });
    await fastify.register(async (scope) => {
      await scope.register(sluiceFastify, { engine, rule: RULE, route: 'direct', key: 'ip' });
      scope.get('/direct', async () => ({ ok: true }));
    });
    await fastify.register(async (scope) => {
      await scope.register(sluiceFastify, { engine, resolve: (request) => ({ tenant: String(request.headers['x-user']), route: 'users', rule: RULE }) });
      scope.get('/users', async () => ({ ok: true }));
    });
    running.fastify = await listenFastify(fastify);
    const keyed = express();
    keyed.use(sluiceExpress({ engine, rule: RULE, route: 'keyed' }));
    keyed.use(sluiceExpress({ engine, rule: RULE, route: 'by-fn', key: (req) => req.headers['x-org'] as string | undefined }));
    keyed.use((_req, res) => {
      res.json({ ok: true });
    });
    running.keyed = await listenExpress(keyed);
  });
  after(async () => {
    for (const app of Object.values(running)) await app.close();
    await engine.close();
    await redis.stop();
  });

  it('an IPv6 client is limited by its address, never a 400', async () => {
    assert.deepEqual(await statuses(`${running.v6!.url}/`), [200, 200, 429]);
  });

  it('behind a trusted proxy: the forwarded address, IPv6 by /64, IPv4-mapped as its IPv4', async () => {
    const url = `${running.fastify!.url}/proxied`;
    const xff = (address: string) => ({ 'x-forwarded-for': `198.51.100.9, ${address}` });
    assert.deepEqual(await statuses(url, xff('2001:db8:1:2::1'), 2), [200, 200]);
    assert.equal((await call(url, xff('2001:db8:1:2:ffff:ffff:ffff:ffff'))).status, 429, 'the same /64');
    assert.equal((await call(url, xff('2001:db8:1:3::1'))).status, 200, 'another /64');
    assert.deepEqual(await statuses(url, xff('203.0.113.7'), 2), [200, 200]);
    assert.equal((await call(url, xff('::ffff:203.0.113.7'))).status, 429, 'IPv4-mapped is the IPv4');
  });

  it('without trusted proxies a forwarding header is never believed', async () => {
    const url = `${running.fastify!.url}/direct`;
    const replies = [];
    for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) replies.push((await call(url, { 'x-forwarded-for': address })).status);
    assert.deepEqual(replies, [200, 200, 429], 'all three come from 127.0.0.1');
  });

  it("a user's id that is not an id is a key of its own (hashed), never a 400", async () => {
    const url = `${running.fastify!.url}/users`;
    assert.deepEqual(await statuses(url, { 'x-user': 'org:42' }), [200, 200, 429]);
    assert.equal((await call(url, { 'x-user': 'org:43' })).status, 200);
    assert.deepEqual(await statuses(url, { 'x-user': 'user-7' }, 1), [200]);
  });

  it('an API key, or a key function value, of any characters counts in a hashed bucket', async () => {
    const url = `${running.keyed!.url}/`;
    const secret = 'sk live/0123456789:abcdef';
    assert.deepEqual(await statuses(url, { 'x-api-key': secret }), [200, 200, 429]);
    assert.equal((await call(url, { 'x-api-key': 'another key' })).status, 200);
    assert.equal((await call(url)).status, 401, 'no API key');
    const org = [];
    for (const key of ['k3', 'k4', 'k5']) org.push((await call(url, { 'x-api-key': key, 'x-org': 'acme inc.' })).status);
    assert.deepEqual(org, [200, 200, 429], 'three API keys, one organisation: its bucket refuses the third');
  });

  it('no raw value reaches Redis: every key is an id or a hash', async () => {
    const client = new Redis(redis.url);
    try {
      const keys = (await client.keys('rl:*')).join('\n');
      for (const raw of ['org:42', 'sk live', 'acme', '2001:db8']) assert.ok(!keys.includes(raw), `${raw} in\n${keys}`);
      assert.match(keys, /rl:\{user-7\}/, 'an id is its own key');
      assert.match(keys, /~ip6\.20010db800010002/, 'the /64 of the forwarded IPv6');
      assert.match(keys, /~ip\.127\.0\.0\.1/);
      assert.match(keys, /~ip\.203\.0\.113\.7/, 'an IPv4 address is keyed as the gateway keys it');
      assert.match(keys, /~ip6\.0{16}/, '::1 by its /64');
      assert.match(keys, /~h\.[0-9a-f]{32}/);
    } finally {
      client.disconnect();
    }
  });

  it('bad options are refused when the adapter is built, naming the field', () => {
    assert.throws(() => sluiceExpress({ engine, rule: RULE, key: 'ip', clientIp: { trustedProxies: ['10.0.0.0/33'] } }), /clientIp\.trustedProxies\.0: must be an IPv4 or IPv6 CIDR/);
    assert.throws(() => sluiceExpress({ engine, rule: RULE, clientIp: { ipv6Prefix: 0 } }), /clientIp\.ipv6Prefix: must be at least 1/);
    assert.throws(() => sluiceExpress({ engine, rule: RULE, key: 'tenant' as 'ip' }), /key: must be 'header', 'ip', 'route' or a function/);
    assert.throws(() => sluiceExpress({ engine, rule: RULE, route: 'a:b' }), /route: must be an id/);
  });
});
