// The library on a real redis-server that is paused (SIGSTOP) and then killed:
// createEngine's resilient engine (exported from the package root) answers
// every decision while Redis is silent or gone, by each rule's onStoreDown,
// and the adapters turn `closed` into 503 store_unavailable. A decision never
// rejects for the store and no answer carries ioredis's text. Every call is
// made while Redis is still paused or dead: a call waiting for Redis would
// hang the test (and fail it at its timeout), not slow it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import { sluiceExpress } from '../../src/adapters/express.js';
import { sluiceFastify } from '../../src/adapters/fastify.js';
import { connectRedis, createEngine, createLimiter, type Engine, parseRule, RedisStore, StoreEngine } from '../../src/index.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, listenExpress, listenFastify, type Reply, type Running, silent } from '../helpers/http-apps.js';

const bucket = (extra: Record<string, unknown> = {}) => parseRule({ policy: 'token_bucket', capacity: 100, refillPerSecond: 10, ...extra });
const RULES = { fallback: bucket(), open: bucket({ onStoreDown: 'open' }), closed: bucket({ onStoreDown: 'closed' }) };
const KEY = { 'x-api-key': 'shop-a' };

/** One Fastify app and one Express app, each with a route per onStoreDown mode. */
async function apps(engine: Engine): Promise<Running[]> {
  const fastify = Fastify();
  for (const [mode, rule] of Object.entries(RULES)) {
    await fastify.register(async (scope) => {
      await scope.register(sluiceFastify, { engine, rule, route: mode });
      scope.get(`/${mode}`, async () => ({ ok: true }));
    });
  }
  const app = express();
  for (const [mode, rule] of Object.entries(RULES)) app.use(`/${mode}`, sluiceExpress({ engine, rule, route: `e-${mode}` }));
  app.use((_req, res) => {
    res.json({ ok: true });
  });
  return [await listenFastify(fastify), await listenExpress(app)];
}

/** What each app answers per mode while the store is down: fallback and open admit, closed is a 503 store_unavailable. */
async function assertStoreDownAnswers(running: Running[]): Promise<void> {
  for (const { url } of running) {
    const replies: Record<string, Reply> = {};
    for (const mode of Object.keys(RULES)) replies[mode] = await call(`${url}/${mode}`, KEY);
    assert.equal(replies.fallback!.status, 200, replies.fallback!.body);
    assert.equal(replies.open!.status, 200, replies.open!.body);
    assert.equal(replies.closed!.status, 503);
    assert.deepEqual(JSON.parse(replies.closed!.body), { error: 'store_unavailable' });
    assert.ok(Number(replies.closed!.headers['retry-after']) >= 1);
    for (const reply of Object.values(replies)) assert.doesNotMatch(reply.body, /ioredis|retries|ECONNREFUSED|Connection/i);
  }
}

describe('createEngine on a Redis that is paused, then killed', { timeout: 60_000 }, () => {
  let redis: RedisServer;
  let engine: Engine;
  let running: Running[];
  const limiter = () => createLimiter({ id: 'api', ...RULES.fallback }, engine);

  before(async () => {
    redis = await startRedis();
    engine = createEngine({ redis: { url: redis.url }, logger: silent });
    running = await apps(engine);
  });
  after(async () => {
    for (const app of running) await app.close();
    await engine.close();
    await redis.stop();
  });

  it('healthy: the decisions come from Redis, closed rules admit', async () => {
    assert.equal((await limiter().consume('user-1')).source, 'redis');
    for (const { url } of running) assert.equal((await call(`${url}/closed`, KEY)).status, 200);
  });

  it('paused: every decision is answered while Redis is still stopped, by onStoreDown', async () => {
    redis.pause();
    try {
      const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter().consume('user-1')));
      assert.ok(decisions.every((decision) => decision.allowed && decision.source === 'fallback'), JSON.stringify(decisions[0]));
      assert.equal((await engine.decide({ tag: 'shop-b', name: 'orders' }, RULES.open)).source, 'open');
      assert.equal((await engine.decide({ tag: 'shop-b', name: 'orders' }, RULES.closed)).source, 'closed');
      await assertStoreDownAnswers(running);
    } finally {
      redis.resume();
    }
  });

  it('killed: no decision rejects, no answer carries the client library\'s message', async () => {
    await redis.kill();
    const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter().consume('user-2')));
    assert.ok(decisions.every((decision) => decision.source === 'fallback'));
    assert.equal((await engine.decideAll([{ bucket: { tag: 'shop-c', name: 'orders' }, rule: RULES.closed, cost: 1 }])).decisions[0]!.source, 'closed');
    await assertStoreDownAnswers(running);
  });
});

describe('createEngine over a client the caller owns', { timeout: 30_000 }, () => {
  it('listens for its errors, so ioredis never reports an unhandled error event', async () => {
    const redis = await startRedis();
    const client = connectRedis({ url: redis.url });
    const engine = createEngine({ redis: client, logger: silent });
    try {
      assert.ok(client.listenerCount('error') >= 1);
      await redis.kill();
      assert.equal((await engine.decide({ tag: 'shop-a', name: 'orders' }, RULES.fallback)).source, 'fallback');
    } finally {
      await engine.close();
      client.disconnect();
      await redis.stop();
    }
  });
});

describe('close() while Redis is paused', { timeout: 30_000 }, () => {
  it('ends: the QUIT that gets no answer is cut off, so a script can exit', async () => {
    const redis = await startRedis();
    const engine = createEngine({ redis: { url: redis.url }, logger: silent });
    try {
      assert.equal((await engine.decide({ tag: 'shop-a', name: 'orders' }, RULES.fallback)).source, 'redis');
      redis.pause();
      await engine.close();
    } finally {
      await redis.stop();
    }
  });
});

describe('StoreEngine over a RedisStore (no deadline, no fallback)', { timeout: 30_000 }, () => {
  it('Redis killed: a failed call is a decision by onStoreDown (fallback read as closed), never a rejection', async () => {
    const redis = await startRedis();
    const client = connectRedis({ url: redis.url });
    client.on('error', () => undefined);
    const engine = new StoreEngine(new RedisStore(client));
    try {
      assert.equal((await engine.decide({ tag: 'shop-a', name: 'orders' }, RULES.fallback)).source, 'redis');
      await redis.kill();
      assert.equal((await engine.decide({ tag: 'shop-a', name: 'orders' }, RULES.fallback)).source, 'closed');
      assert.equal((await engine.decide({ tag: 'shop-a', name: 'orders' }, RULES.open)).source, 'open');
      const both = await engine.decideAll([
        { bucket: { tag: 'shop-a', name: 'orders' }, rule: RULES.open, cost: 1 },
        { bucket: { tag: 'shop-b', name: 'orders' }, rule: RULES.closed, cost: 1 },
      ]);
      assert.equal(both.allowed, false);
      assert.deepEqual(both.decisions.map((d) => d.source), ['open', 'closed']);
      assert.ok(engine.counters().storeErrors >= 3);
    } finally {
      await engine.close();
      await redis.stop();
    }
  });
});
