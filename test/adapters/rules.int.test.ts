// Every rule, from any door, goes through parseRule: one handed straight to an
// engine (memory, or the resilient engine on a real Redis), or returned by an
// adapter's resolve. A typo is an error naming the field, never a bucket that
// refuses forever, a Lua arithmetic error or a limit that is never enforced.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import Fastify from 'fastify';
import { sluiceExpress } from '../../src/adapters/express.js';
import { sluiceFastify } from '../../src/adapters/fastify.js';
import { createRequestLimiter } from '../../src/adapters/limit.js';
import { createEngine, type Engine, MemoryStore, type Rule, StoreEngine } from '../../src/index.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, listenExpress, listenFastify, type Running, silent } from '../helpers/http-apps.js';

const TYPO = { policy: 'token_bucket', capacity: 5, refilPerSecond: 1 } as unknown as Rule;
const NO_WINDOW = { policy: 'fixed_window', limit: 5 } as unknown as Rule;
const GOOD = { policy: 'token_bucket', capacity: 5, refillPerSecond: 1 } as Rule;

const invalid = (field: string, message: RegExp) => (error: unknown) => {
  const e = error as { code?: string; field?: string; message: string };
  assert.equal(e.code, 'ERR_RULE_INVALID', e.message);
  assert.equal(e.field, field);
  assert.match(e.message, message);
  return true;
};

for (const kind of ['memory', 'redis'] as const) {
  describe(`rules handed to the ${kind} engine`, { timeout: 30_000 }, () => {
    let redis: RedisServer | undefined;
    let engine: Engine;
    before(async () => {
      if (kind === 'redis') redis = await startRedis();
      engine = redis ? createEngine({ redis: { url: redis.url }, logger: silent }) : new StoreEngine(new MemoryStore());
    });
    after(async () => {
      await engine.close();
      await redis?.stop();
    });

    it('decide, peek, inspect and reset refuse a misspelt or incomplete rule, naming the field', async () => {
      await assert.rejects(engine.decide({ tag: 'shop-a', name: 'orders' }, TYPO), invalid('rule.refillPerSecond', /expected number/));
      await assert.rejects(engine.decide({ tag: 'shop-a', name: 'orders' }, NO_WINDOW), invalid('rule.windowMs', /is required \(or give calendar/));
      await assert.rejects(engine.peek({ tag: 'shop-a', name: 'orders' }, TYPO), invalid('rule.refillPerSecond', /./));
      await assert.rejects(engine.inspect({ tag: 'shop-a', name: 'orders' }, NO_WINDOW), invalid('rule.windowMs', /./));
      await assert.rejects(engine.reset({ tag: 'shop-a', name: 'orders' }, TYPO), invalid('rule.refillPerSecond', /./));
      const extra = { ...GOOD, refilPerSecond: 1 } as unknown as Rule;
      await assert.rejects(engine.decide({ tag: 'shop-a', name: 'orders' }, extra), invalid('rule', /unknown field\(s\) refilPerSecond/));
    });

    it('decideAll names the call whose rule is wrong', async () => {
      const calls = [
        { bucket: { tag: 'shop-a', name: 'burst' }, rule: GOOD, cost: 1 },
        { bucket: { tag: 'shop-a', name: 'daily' }, rule: NO_WINDOW, cost: 1 },
      ];
      await assert.rejects(engine.decideAll(calls), invalid('calls.1.rule.windowMs', /./));
    });

    it('a valid rule object, never parsed before, is used as given', async () => {
      const decision = await engine.decide({ tag: 'shop-a', name: 'orders' }, { ...GOOD });
      assert.equal(decision.allowed, true);
      assert.equal(decision.limit, 5);
      assert.equal(decision.remaining, 4);
    });
  });
}

describe("an adapter's resolve returning a bad rule", { timeout: 30_000 }, () => {
  const engine = new StoreEngine(new MemoryStore());
  const running: Running[] = [];
  before(async () => {
    const fastify = Fastify();
    await fastify.register(sluiceFastify, { engine, resolve: () => ({ tenant: 'shop-a', route: 'orders', rule: TYPO }) });
    fastify.get('/', async () => ({ ok: true }));
    running.push(await listenFastify(fastify));
    const app = express();
    app.use(sluiceExpress({ engine, resolve: () => ({ tenant: 'shop-a', route: 'orders', rule: NO_WINDOW }) }));
    app.use((_req, res) => {
      res.json({ ok: true });
    });
    app.use((error: Error & { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
      res.status(error.status ?? 500).json({ caught: error.message });
    });
    running.push(await listenExpress(app));
  });
  after(async () => {
    for (const app of running) await app.close();
  });

  it('rules given when the adapter is built are checked then, naming the field', () => {
    assert.throws(() => sluiceExpress({ engine, rule: TYPO }), invalid('rule.refillPerSecond', /./));
    const limits = [
      { id: 'burst', rule: GOOD },
      { id: 'daily', rule: NO_WINDOW },
    ];
    assert.throws(() => sluiceExpress({ engine, limits }), invalid('limits.1.rule.windowMs', /./));
  });

  it("a resolve naming a route Sluice reserves (`~…`, its per-address buckets) is the app's error too", async () => {
    const limit = createRequestLimiter({ engine, resolve: () => ({ tenant: 'shop-a', route: '~ip.1.2.3.4', rule: GOOD }) });
    const raw = { headers: {}, socket: { remoteAddress: '127.0.0.1' } };
    await assert.rejects(limit({}, raw), (error: Error & { status?: number }) => {
      assert.match(error.message, /route: must not start with ~/);
      assert.equal(error.status, 500);
      return true;
    });
  });

  it('is a 500 naming the field (the app is wrong, not the client), never admitted unlimited', async () => {
    const [fastify, app] = running;
    const fromFastify = await call(`${fastify!.url}/`);
    assert.equal(fromFastify.status, 500);
    assert.match(fromFastify.body, /rule\.refillPerSecond/);
    const fromExpress = await call(`${app!.url}/`);
    assert.equal(fromExpress.status, 500);
    assert.match(JSON.parse(fromExpress.body).caught, /rule\.windowMs/);
  });
});
