// The adapters with `key: { claim: 'sub' }`: the app verifies the JWT itself
// (here with jose, as express-jwt or @fastify/jwt would) and puts the payload
// on the request; each subject gets its own bucket, and a request without a
// payload or the claim gets 401, never a shared bucket.
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { jwtVerify } from 'jose';
import { sluiceExpress } from '../../src/adapters/express.js';
import { sluiceFastify } from '../../src/adapters/fastify.js';
import type { Rule } from '../../src/policies/rule.js';
import { StoreEngine } from '../../src/limiter/engine/engine.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import { call } from '../helpers/gateway-support.js';
import { sign } from '../helpers/jwt-support.js';

const RULE: Rule = { policy: 'fixed_window', limit: 2, windowMs: 60_000 };
const secret = new TextEncoder().encode('k'.repeat(40));
const hs = { secret, alg: 'HS256' };

/** The app's own verification: the payload, or undefined for no (or a bad) token. */
async function payloadOf(authorization: string | undefined) {
  if (!authorization?.startsWith('Bearer ')) return undefined;
  return (await jwtVerify(authorization.slice(7), secret, { algorithms: ['HS256'] }).catch(() => undefined))?.payload;
}

describe('adapters with a claim key', () => {
  let fastify: FastifyInstance;
  let expressServer: Server;
  const urls: Record<string, string> = {};

  before(async () => {
    const engine = new StoreEngine(new MemoryStore());
    fastify = Fastify();
    fastify.addHook('onRequest', async (request) => {
      (request as unknown as { user?: unknown }).user = await payloadOf(request.headers.authorization);
    });
    await fastify.register(sluiceFastify, { engine, limits: [{ id: 'per-user', rule: RULE, key: { claim: 'sub' } }] });
    fastify.get('/orders', async () => ({ ok: true }));
    urls.fastify = await fastify.listen({ port: 0, host: '127.0.0.1' });

    const app = express();
    app.use((req, _res, next) => {
      payloadOf(req.headers.authorization).then((payload) => {
        (req as unknown as { auth?: unknown }).auth = payload;
        next();
      }, next);
    });
    // A getter of the app's own, here the same req.auth spelled out.
    app.use(sluiceExpress({ engine, limits: [{ id: 'per-user-x', rule: RULE, key: { claim: 'sub' } }], claims: (req) => (req as unknown as { auth?: Record<string, unknown> }).auth }));
    app.get('/orders', (_req, res) => {
      res.json({ ok: true });
    });
    await new Promise<void>((resolve) => {
      expressServer = app.listen(0, '127.0.0.1', () => resolve());
    });
    urls.express = `http://127.0.0.1:${(expressServer.address() as AddressInfo).port}`;
  });

  after(async () => {
    await fastify.close();
    await new Promise<void>((resolve) => expressServer.close(() => resolve()));
  });

  for (const framework of ['fastify', 'express'] as const) {
    it(`${framework}: two subjects have separate buckets; no payload or no claim is a 401`, async () => {
      const url = `${urls[framework]}/orders`;
      const alice = { authorization: `Bearer ${await sign(hs, { sub: 'alice' })}` };
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(url, { headers: alice })).status);
      assert.deepEqual(statuses, [200, 200, 429]);
      assert.equal((await call(url, { headers: { authorization: `Bearer ${await sign(hs, { sub: 'bob' })}` } })).status, 200);
      const none = await call(url);
      assert.equal(none.status, 401);
      assert.deepEqual(JSON.parse(none.body), { error: 'missing_limit_claim' });
      assert.equal((await call(url, { headers: { authorization: `Bearer ${await sign(hs, { org: 'x' })}` } })).status, 401);
    });
  }

  it('a claim key that is not { claim: name } is refused when the adapter is built', () => {
    const engine = new StoreEngine(new MemoryStore());
    assert.throws(() => sluiceExpress({ engine, limits: [{ id: 'x', rule: RULE, key: { claim: '' } }] }), /limits\.0\.key/);
  });
});
