// `kind: concurrency` through the gateway over real HTTP, on the memory store
// and on a real redis-server: at most N requests of one key in flight (the
// N+1th gets 429 naming the limit, another key is unaffected, a finished or
// aborted request frees its slot), a refusal charges no rate bucket and a
// rate refusal holds no slot, and with Redis down the limit's onStoreDown decides.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { type HoldingUpstream, inFlight, send, startHoldingUpstream } from './concurrency-support.js';
import { until } from '../helpers/poll.js';
import { startGateway } from '../helpers/gateway-support.js';

const yaml = (store: string) => `
routes:
  - id: slow
    path: /slow
    upstream: '\${UP}'
    limits: [{ id: slow-cc, kind: concurrency, key: tenant, max: 2 }]
  - id: mixed
    path: /mixed
    upstream: '\${UP}'
    limits:
      - { id: mixed-cc, kind: concurrency, key: tenant, max: 1 }
      - { id: mixed-rate, key: tenant, rule: { policy: token_bucket, capacity: 3, refillPerSecond: 0.001 } }
  - id: closed
    path: /closed
    upstream: '\${UP}'
    limits: [{ id: closed-cc, kind: concurrency, key: ip, max: 5, onStoreDown: closed }]
tenants: { keys: [{ key: key-aaaaaaa, tenant: a }, { key: key-bbbbbbb, tenant: b }, { key: key-ccccccc, tenant: c }] }
headers: { ietf: true }
${store}
`;

for (const kind of ['memory', 'redis'] as const) {
  describe(`concurrency limit through the gateway (${kind} store)`, () => {
    let redis: RedisServer | undefined;
    let upstream: HoldingUpstream;
    let gateway: RunningSluice;

    before(async () => {
      upstream = await startHoldingUpstream();
      redis = kind === 'redis' ? await startRedis() : undefined;
      // two instances counted: the fallback's share of max 2 is 1
      const store = redis ? `store: { type: redis, url: '${redis.url}', deadlineMs: 2000 }\ninstances: 2` : '';
      gateway = await startGateway(yaml(store), { UP: upstream.url });
    });
    after(async () => {
      upstream.finishAll();
      await gateway.close();
      await upstream.close();
      await redis?.stop();
    });

    it('admits N in flight per key, refuses the next with 429 naming the limit, and admits again once one finishes', async () => {
      const first = [send(`${gateway.url}/slow`, 'key-aaaaaaa'), send(`${gateway.url}/slow`, 'key-aaaaaaa')];
      await until(() => upstream.held.length === 2, 'two requests at the upstream');
      assert.equal(await inFlight('slow-cc'), 2);
      const refused = await send(`${gateway.url}/slow`, 'key-aaaaaaa');
      assert.equal(refused.status, 429);
      assert.deepEqual(JSON.parse(refused.body), { error: 'concurrency_limited', limit: 'slow-cc', retryAfterMs: 1000 });
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(refused.headers['x-ratelimit-limit'], '2');
      assert.equal(refused.headers['x-ratelimit-remaining'], '0');
      assert.equal(refused.headers['ratelimit-policy'], '"slow-cc";q=2');
      assert.equal(upstream.arrived, 2, 'the refused request never reached the upstream');
      // another key has slots of its own
      const other = send(`${gateway.url}/slow`, 'key-bbbbbbb');
      await until(() => upstream.held.length === 3, "tenant b's request at the upstream");
      upstream.finishOne();
      assert.equal((await first[0]!).status, 200);
      const again = send(`${gateway.url}/slow`, 'key-aaaaaaa');
      await until(() => upstream.held.length === 3, "tenant a's new request at the upstream");
      upstream.finishAll();
      assert.deepEqual((await Promise.all([first[1]!, other, again])).map((reply) => reply.status), [200, 200, 200]);
      await until(async () => (await inFlight('slow-cc')) === 0, 'every lease given back');
    });

    it('an aborted client frees its slot', async () => {
      const controller = new AbortController();
      const aborted = send(`${gateway.url}/slow`, 'key-ccccccc', controller.signal).catch((error: Error) => error);
      const kept = send(`${gateway.url}/slow`, 'key-ccccccc');
      await until(() => upstream.held.length === 2, 'two requests at the upstream');
      assert.equal((await send(`${gateway.url}/slow`, 'key-ccccccc')).status, 429);
      controller.abort();
      assert.ok((await aborted) instanceof Error);
      await until(async () => (await inFlight('slow-cc')) === 1, "the aborted request's lease given back");
      const arrived = upstream.arrived;
      const next = send(`${gateway.url}/slow`, 'key-ccccccc');
      await until(() => upstream.arrived === arrived + 1, 'the next request at the upstream');
      upstream.finishAll();
      assert.deepEqual((await Promise.all([kept, next])).map((reply) => reply.status), [200, 200]);
    });

    it('a concurrency refusal charges no rate bucket, and a rate refusal holds no slot', async () => {
      const held = send(`${gateway.url}/mixed`, 'key-aaaaaaa');
      await until(() => upstream.held.length === 1, 'the first request at the upstream');
      for (let i = 0; i < 5; i++) assert.equal(JSON.parse((await send(`${gateway.url}/mixed`, 'key-aaaaaaa')).body).error, 'concurrency_limited');
      upstream.finishOne();
      assert.equal((await held).status, 200);
      // capacity 3: the first request took one, the five refusals none
      const statuses: number[] = [];
      for (let i = 0; i < 2; i++) {
        const next = send(`${gateway.url}/mixed`, 'key-aaaaaaa');
        await until(() => upstream.held.length === 1, 'a request at the upstream');
        upstream.finishOne();
        statuses.push((await next).status);
      }
      assert.deepEqual(statuses, [200, 200]);
      // the bucket is empty: refused by the rate limit, twice in a row, so the first refusal gave its slot back
      for (let i = 0; i < 2; i++) assert.equal(JSON.parse((await send(`${gateway.url}/mixed`, 'key-aaaaaaa')).body).error, 'rate_limited');
      assert.equal(await inFlight('mixed-cc'), 0);
    });

    if (kind === 'redis') {
      it("with Redis down: onStoreDown closed answers 503, fallback counts locally against this instance's share", async () => {
        await redis!.kill();
        const closed = await send(`${gateway.url}/closed`, 'key-aaaaaaa');
        assert.equal(closed.status, 503);
        assert.equal(JSON.parse(closed.body).error, 'store_unavailable');
        const first = send(`${gateway.url}/slow`, 'key-bbbbbbb');
        await until(() => upstream.held.length === 1, 'a fallback-admitted request at the upstream');
        assert.equal((await send(`${gateway.url}/slow`, 'key-bbbbbbb')).status, 429, "this instance's share is max 2 / 2 instances");
        upstream.finishAll();
        assert.equal((await first).status, 200);
      });
    }
  });
}
