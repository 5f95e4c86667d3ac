// Reserve, then settle, in the adapters on real Fastify and Express apps over
// real HTTP: a limit reserves its `cost` when the request is admitted, and
// once the response has gone its `settle` gives the units used, charged as a
// debt past empty or given back; `count` gives the reservation back for the
// answers it does not count (failed logins only). A bad value keeps the
// reservation; a bad option is refused naming its field. On the memory store
// and on a real redis-server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import express, { type Request } from 'express';
import Fastify, { type FastifyRequest } from 'fastify';
import { sluiceExpress } from '../../src/adapters/express.js';
import { sluiceFastify } from '../../src/adapters/fastify.js';
import { createEngine, type Engine, parseRule, SluiceError } from '../../src/index.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { until } from '../helpers/poll.js';
import { call, listenExpress, listenFastify, type Running } from '../helpers/http-apps.js';

// 1,000 tokens a day; the refill is too slow to matter within a test.
const TOKENS = parseRule({ policy: 'token_bucket', capacity: 1000, refillPerSecond: 0.001 });
const LOGINS = parseRule({ policy: 'fixed_window', limit: 3, windowMs: 600_000 });

for (const kind of ['memory', 'redis'] as const) {
  describe(`settling reservations in the adapters on the ${kind} store`, () => {
    let redis: RedisServer | undefined;
    let engine: Engine;
    const running: Record<string, Running> = {};
    const remaining = async (name: string) => (await engine.peek({ tag: name === 'logins' ? '~route' : 'u-1', name }, name === 'logins' ? LOGINS : TOKENS)).remaining;

    before(async () => {
      if (kind === 'redis') redis = await startRedis();
      engine = createEngine(redis ? { redis: { url: redis.url } } : {});
      // Fastify: an LLM-like route whose handler says what it used; the estimate (cost) is reserved first.
      const fastify = Fastify();
      const used = new WeakMap<FastifyRequest, number | string>();
      await fastify.register(sluiceFastify, {
        engine,
        limits: [{ id: 'tokens', rule: TOKENS, key: (request) => request.headers['x-user'] as string | undefined, cost: 100, settle: (request) => used.get(request) as number | undefined }],
      });
      fastify.post('/complete', async (request) => {
        const tokens = request.headers['x-used'] as string;
        used.set(request, tokens === 'bad' ? 'lots' : Number(tokens));
        return { usage: { total_tokens: tokens } };
      });
      running.fastify = await listenFastify(fastify);
      // Express: failed logins only count against the login limit.
      const app = express();
      app.use(sluiceExpress({ engine, limits: [{ id: 'logins', rule: LOGINS, key: 'route', count: { status: [401, 403] } }] }));
      app.use((req: Request, res) => {
        res.status(req.headers['x-password'] === 'right' ? 200 : 401).json({});
      });
      running.express = await listenExpress(app);
    });
    after(async () => {
      for (const app of Object.values(running)) await app.close();
      await engine.close();
      await redis?.stop();
    });

    it('charges what the response used: less is given back, more is a debt', async () => {
      const post = (used: string) => fetch(`${running.fastify!.url}/complete`, { method: 'POST', headers: { 'x-user': 'u-1', 'x-used': used } });
      assert.equal((await post('30')).status, 200);
      await until(async () => (await remaining('tokens')) === 970, 'the 100 reserved settled to 30');
      assert.equal((await post('400')).status, 200);
      await until(async () => (await remaining('tokens')) === 570, 'the next one settled to 400');
      assert.equal((await post('bad')).status, 200, 'the client is answered whatever the value');
      await until(async () => (await remaining('tokens')) === 470, 'a bad value keeps the reservation');
      assert.equal((await post('600')).status, 200);
      await until(async () => (await remaining('tokens')) === 0, 'charged past what was left: a debt');
      assert.equal((await post('1')).status, 429, 'a tenant in debt is refused until the refill repays it');
    });

    it('count: only the answers listed count, the others give their reservation back', async () => {
      const login = (password: string) => call(`${running.express!.url}/login`, { 'x-password': password });
      for (let i = 0; i < 5; i++) assert.equal((await login('right')).status, 200, 'successful logins never use the limit up');
      await until(async () => (await remaining('logins')) === 3, 'every successful login given back');
      assert.deepEqual([(await login('wrong')).status, (await login('wrong')).status, (await login('wrong')).status, (await login('wrong')).status], [401, 401, 401, 429]);
    });
  });
}

describe('the settle and count options', () => {
  it('are refused naming their field when they are not what they say', () => {
    const engine = createEngine({});
    assert.throws(() => sluiceExpress({ engine, limits: [{ id: 'a', rule: TOKENS, settle: 5 as never }] }), (error: unknown) => error instanceof SluiceError && error.field === 'limits.0.settle');
    assert.throws(() => sluiceExpress({ engine, limits: [{ id: 'a', rule: TOKENS, count: { status: [] } as never }] }), (error: unknown) => error instanceof SluiceError && /^limits\.0\.count/.test(error.field ?? ''));
    void engine.close();
  });
});
