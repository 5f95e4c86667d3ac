// What the gateway does when the limiter itself misbehaves, and on shutdown:
// a `closed` decision → 503; an engine that throws or rejects → 500, logged,
// and never an unhandled rejection; close() lets in-flight requests finish.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Decision } from '../../src/core/decision.js';
import type { Engine } from '../../src/limiter/engine/engine.js';
import { ChainStats } from '../../src/limiter/metrics/stats.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const YAML = `
routes: [{ id: r, path: /r, upstream: '\${UP}' }]
tenants: { unknownKeys: default-rule }
`;

/** An engine whose decide is given by the test; the rest is never called here. */
function engineWith(decide: Engine['decide']): Engine {
  const engine: Engine = {
    decide,
    // One limit per route here: its decision is the request's.
    decideAll: async ([call]) => {
      const decision = await decide(call!.bucket, call!.rule, call!.cost);
      return { allowed: decision.allowed, decisions: [decision], governing: 0 };
    },
    peek: decide,
    reset: async () => {},
    listBlocked: async () => [],
    liftBlock: async () => false,
    inspect: async () => {
      throw new Error('unused');
    },
    health: () => ({ mode: 'redis', storeReachable: false }),
    counters: () => new ChainStats().snapshot(1),
    close: async () => {},
  };
  return engine;
}

const closedDecision: Decision = { allowed: false, remaining: 0, limit: 20, resetAfterMs: 0, retryAfterMs: 2500, delayMs: 0, source: 'closed' };

describe('limiter failures and shutdown', () => {
  let upstream: TestUpstream;
  let release: (() => void) | undefined;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  before(async () => {
    process.on('unhandledRejection', onUnhandled);
    upstream = await startUpstream((req, res) => {
      req.resume();
      if (req.url === '/r?slow') {
        release = () => res.end('{"late":true}');
        return;
      }
      res.end('{}');
    });
  });
  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    await upstream.close();
  });

  it('answers 503 with Retry-After when the store is down and the rule says closed', async () => {
    const gateway = await startGateway(YAML, { UP: upstream.url }, { engine: engineWith(async () => closedDecision) });
    try {
      const reply = await call(`${gateway.url}/r`, { headers: { 'x-api-key': 'shop-a' } });
      assert.equal(reply.status, 503);
      assert.equal(reply.headers['retry-after'], '3');
      assert.deepEqual(JSON.parse(reply.body), { error: 'store_unavailable' });
    } finally {
      await gateway.close();
    }
  });

  it('answers 500 when the engine rejects or throws, and keeps serving', async () => {
    let mode = 0;
    const engine = engineWith((() => {
      mode++;
      if (mode === 1) return Promise.reject(new Error('boom'));
      if (mode === 2) throw new Error('sync boom');
      return Promise.resolve({ ...closedDecision, allowed: true, remaining: 19, source: 'redis' });
    }) as Engine['decide']);
    const gateway = await startGateway(YAML, { UP: upstream.url }, { engine });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await call(`${gateway.url}/r`, { headers: { 'x-api-key': 'shop-a' } })).status);
      assert.deepEqual(statuses, [500, 500, 200]);
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(unhandled, []);
    } finally {
      await gateway.close();
    }
  });

  it('lets an in-flight request finish on close, and refuses new connections', async () => {
    const gateway = await startGateway(YAML, { UP: upstream.url });
    const inFlight = call(`${gateway.url}/r?slow`, { headers: { 'x-api-key': 'shop-a' } });
    while (!release) await new Promise((resolve) => setTimeout(resolve, 5));
    const closed = gateway.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await assert.rejects(fetch(`${gateway.url}/r`, { headers: { 'x-api-key': 'shop-a' } }));
    release();
    const reply = await inFlight;
    assert.equal(reply.status, 200);
    assert.deepEqual(JSON.parse(reply.body), { late: true });
    await closed;
  });
});
