// The in-process adapters in real Fastify and Express apps, over real HTTP, on
// the memory store and a real redis-server: same headers and 429 as the gateway.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { sluiceExpress } from '../../src/adapters/express.js';
import { sluiceFastify } from '../../src/adapters/fastify.js';
import type { Rule } from '../../src/policies/rule.js';
import { type Engine, StoreEngine } from '../../src/limiter/engine/engine.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { RedisStore } from '../../src/stores/redis-store.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call } from '../helpers/gateway-support.js';

const RULE: Rule = { policy: 'token_bucket', capacity: 2, refillPerSecond: 0.25 };

for (const kind of ['memory', 'redis'] as const) {
  describe(`adapters on the ${kind} store`, () => {
    let redis: RedisServer | undefined;
    let engine: Engine;
    let fastify: FastifyInstance;
    let fastifyUrl: string;
    let expressServer: Server;
    let expressUrl: string;

    before(async () => {
      if (kind === 'redis') redis = await startRedis();
      engine = new StoreEngine(redis ? new RedisStore(redis.client()) : new MemoryStore());

      fastify = Fastify();
      await fastify.register(async (scope) => {
        // Registered without encapsulation: it covers the routes of this scope.
        await scope.register(sluiceFastify, { engine, rule: RULE, route: 'orders' });
        scope.post('/orders', async () => ({ ok: true }));
      });
      await fastify.register(async (scope) => {
        await scope.register(sluiceFastify, {
          engine,
          resolve: (request) => (request.url.startsWith('/free') ? undefined : { tenant: 'ietf', route: 'checkout', rule: RULE }),
          headers: { ietf: true, problemJson: true },
        });
        scope.get('/scoped', async () => ({ ok: true }));
        scope.get('/free', async () => ({ ok: true }));
      });
      fastifyUrl = await fastify.listen({ port: 0, host: '127.0.0.1' });

      const app = express();
      app.use('/orders', sluiceExpress({ engine, resolve: (req) => ({ tenant: String(req.headers['x-api-key']), route: 'express-orders', rule: RULE }) }));
      app.use('/keyed', sluiceExpress({ engine, rule: RULE, route: 'keyed' }));
      app.all('/{*any}', (_req, res) => {
        res.json({ ok: true });
      });
      await new Promise<void>((resolve) => {
        expressServer = app.listen(0, '127.0.0.1', () => resolve());
      });
      expressUrl = `http://127.0.0.1:${(expressServer.address() as AddressInfo).port}`;
    });
    after(async () => {
      await fastify.close();
      await new Promise<void>((resolve) => expressServer.close(() => resolve()));
      expressServer.closeAllConnections();
      await engine.close();
      await redis?.stop();
    });

    it('fastify: sets the headers and answers 429 with Retry-After', async () => {
      const replies = [];
      for (let i = 0; i < 3; i++) replies.push(await call(`${fastifyUrl}/orders`, { method: 'POST', headers: { 'x-api-key': 'shop-a' } }));
      assert.deepEqual(replies.map((r) => r.status), [200, 200, 429]);
      assert.deepEqual(replies.map((r) => r.headers['x-ratelimit-remaining']), ['1', '0', '0']);
      assert.deepEqual(replies.map((r) => r.headers['x-ratelimit-limit']), ['2', '2', '2']);
      assert.deepEqual(replies.map((r) => r.headers['x-ratelimit-reset']), ['4', '8', '8']);
      assert.equal(replies[2]!.headers['retry-after'], '4');
      assert.equal(JSON.parse(replies[2]!.body).error, 'rate_limited');
      const anonymous = await call(`${fastifyUrl}/orders`, { method: 'POST' });
      assert.equal(anonymous.status, 401);
    });

    it('fastify: resolve() per request, IETF fields and problem+json', async () => {
      const replies = [];
      for (let i = 0; i < 3; i++) replies.push(await call(`${fastifyUrl}/scoped`));
      assert.deepEqual(replies.map((r) => r.status), [200, 200, 429]);
      assert.equal(replies[0]!.headers['ratelimit-policy'], '"checkout";q=2;w=8');
      assert.equal(replies[0]!.headers.ratelimit, '"checkout";r=1;t=4');
      assert.match(String(replies[2]!.headers['content-type']), /^application\/problem\+json/);
      assert.equal(JSON.parse(replies[2]!.body).status, 429);
      const free = await call(`${fastifyUrl}/free`);
      assert.equal(free.status, 200);
      assert.equal(free.headers['x-ratelimit-limit'], undefined, 'resolve() returned undefined: not limited');
    });

    it('express: resolve() and a fixed rule keyed by X-Api-Key', async () => {
      const replies = [];
      for (let i = 0; i < 3; i++) replies.push(await call(`${expressUrl}/orders`, { method: 'POST', headers: { 'x-api-key': 'shop-e' } }));
      assert.deepEqual(replies.map((r) => r.status), [200, 200, 429]);
      assert.deepEqual(replies.map((r) => r.headers['x-ratelimit-remaining']), ['1', '0', '0']);
      assert.equal(replies[2]!.headers['retry-after'], '4');
      assert.deepEqual(Object.keys(JSON.parse(replies[2]!.body)), ['error', 'retryAfterMs']);
      const other = await call(`${expressUrl}/orders`, { method: 'POST', headers: { 'x-api-key': 'shop-f' } });
      assert.equal(other.status, 200, 'another tenant has its own bucket');

      const keyed = [];
      for (let i = 0; i < 3; i++) keyed.push((await call(`${expressUrl}/keyed`, { headers: { 'x-api-key': 'shop-k' } })).status);
      assert.deepEqual(keyed, [200, 200, 429]);
      assert.equal((await call(`${expressUrl}/keyed`)).status, 401);
    });
  });
}
