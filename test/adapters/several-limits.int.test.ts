// Several limits per adapter, decided together with decideAll (on memory and on
// the resilient engine over a real Redis): a request refused by one limit is
// charged to none, the headers describe the governing limit and the IETF fields
// list them all; the header helpers are exported for a plain node server.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import { sluiceExpress } from '../../src/adapters/express.js';
import { sluiceFastify } from '../../src/adapters/fastify.js';
import {
  createEngine,
  type Engine,
  hashedId,
  limitViews,
  MemoryStore,
  parseRule,
  pushLimitsHeaders,
  rejectionOf,
  StoreEngine,
} from '../../src/index.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, listenExpress, listenFastify, type Running, silent } from '../helpers/http-apps.js';

const BURST = parseRule({ policy: 'token_bucket', capacity: 2, refillPerSecond: 0.001 });
const DAILY = parseRule({ policy: 'fixed_window', limit: 3, windowMs: 86_400_000 });
const ROUTE_CAP = parseRule({ policy: 'fixed_window', limit: 3, windowMs: 86_400_000 });
const PER_CLIENT = parseRule({ policy: 'fixed_window', limit: 1, windowMs: 86_400_000 });

/** A plain node server limited by two limits with the exported helpers, as a framework-free service would. */
function plainServer(engine: Engine) {
  const limits = [
    { limitId: 'burst', bucket: { tag: 'plain', name: 'p-burst' }, rule: BURST, cost: 1 },
    { limitId: 'daily', bucket: { tag: 'plain', name: 'p-daily' }, rule: DAILY, cost: 1 },
  ];
  const options = { ietf: true, problemJson: false };
  return createServer((_req, res) => {
    void engine.decideAll(limits).then((outcome) => {
      const views = limitViews(limits, outcome);
      if (!outcome.allowed) {
        const { headers, body } = rejectionOf(views, outcome.governing, options);
        res.writeHead(429, headers).end(body);
        return;
      }
      const headers: string[] = [];
      pushLimitsHeaders(headers, views, outcome.governing, options);
      res.writeHead(200, headers).end('ok');
    });
  });
}

for (const kind of ['memory', 'redis'] as const) {
  describe(`several limits per adapter on the ${kind} engine`, { timeout: 60_000 }, () => {
    let redis: RedisServer | undefined;
    let engine: Engine;
    const running: Record<string, Running> = {};

    before(async () => {
      if (kind === 'redis') redis = await startRedis();
      engine = redis ? createEngine({ redis: { url: redis.url }, logger: silent }) : new StoreEngine(new MemoryStore());
      const fastify = Fastify();
      await fastify.register(sluiceFastify, {
        engine,
        limits: [
          { id: 'burst', rule: BURST },
          { id: 'daily', rule: DAILY },
        ],
        headers: { ietf: true },
      });
      fastify.get('/both', async () => ({ ok: true }));
      running.fastify = await listenFastify(fastify);
      const app = express();
      app.use(
        sluiceExpress({
          engine,
          limits: [
            { id: 'route-cap', key: 'route', rule: ROUTE_CAP },
            { id: 'per-client', rule: PER_CLIENT },
          ],
        }),
      );
      app.use((_req, res) => {
        res.json({ ok: true });
      });
      running.express = await listenExpress(app);
      const plain = plainServer(engine);
      await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
      running.plain = {
        url: `http://127.0.0.1:${(plain.address() as AddressInfo).port}`,
        close: () => new Promise<void>((done) => plain.close(() => done()).closeAllConnections()),
      };
    });
    after(async () => {
      for (const app of Object.values(running)) await app.close();
      await engine.close();
      await redis?.stop();
    });

    it('burst + daily: the refused request is charged to neither; the IETF fields list both', async () => {
      const replies = [];
      for (let i = 0; i < 3; i++) replies.push(await call(`${running.fastify!.url}/both`, { 'x-api-key': 'shop-a' }));
      assert.deepEqual(replies.map((r) => r.status), [200, 200, 429]);
      assert.equal(replies[0]!.headers['ratelimit-policy'], '"burst";q=2;w=2000, "daily";q=3;w=86400');
      assert.equal(replies[1]!.headers['x-ratelimit-limit'], '2', 'the burst is closest to exhaustion');
      assert.equal(JSON.parse(replies[2]!.body).error, 'rate_limited');
      const daily = await engine.peek({ tag: hashedId('shop-a'), name: 'daily' }, DAILY);
      assert.equal(daily.remaining, 1, 'two of three daily units used: the refused request took none');
    });

    it('a route-wide cap and a per-client limit: whichever refuses, the other is not charged', async () => {
      const url = `${running.express!.url}/`;
      const first = [];
      for (const client of ['c1', 'c2', 'c3']) first.push((await call(url, { 'x-api-key': client })).status);
      assert.deepEqual(first, [200, 200, 200]);
      const capped = await call(url, { 'x-api-key': 'c4' });
      assert.equal(capped.status, 429, 'the route cap is used up');
      assert.equal(capped.headers['x-ratelimit-limit'], '3', 'the route cap governs');
      assert.equal((await engine.peek({ tag: hashedId('c4'), name: 'per-client' }, PER_CLIENT)).remaining, 1, "c4's own limit was not charged");
    });

    it('the exported header helpers give a plain node server the same headers and 429', async () => {
      const replies = [];
      for (let i = 0; i < 3; i++) replies.push(await call(`${running.plain!.url}/`));
      assert.deepEqual(replies.map((r) => r.status), [200, 200, 429]);
      assert.equal(replies[0]!.headers['ratelimit-policy'], '"burst";q=2;w=2000, "daily";q=3;w=86400');
      assert.equal(replies[2]!.headers['retry-after'], String(Math.ceil(1 / 0.001)));
      assert.equal(JSON.parse(replies[2]!.body).error, 'rate_limited');
    });
  });
}
