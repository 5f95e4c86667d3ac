// Traffic shaping with a leaky-bucket rule, on both stores: accepted requests
// are held and released in decision order at about the rule's rate; overflow
// gets 429; past the per-process queue cap, 503.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, startGateway, startUpstream, type TestUpstream, tally } from './support.js';

const RATE = 5; // per second: 200 ms apart, so all nine arrive before the first held one leaves

const config = (store: string, extra = '') => `
routes:
  - { id: shaped, path: /shaped, upstream: '\${UP}' }
  - { id: slow, path: /slow, upstream: '\${UP}' }
tenants: { unknownKeys: default-rule }
rules:
  - { tenant: '*', route: shaped, policy: leaky_bucket, ratePerSecond: ${RATE}, burst: 5 }
  - { tenant: '*', route: slow, policy: leaky_bucket, ratePerSecond: 1, burst: 5 }
${store}
${extra}
`;

for (const kind of ['memory', 'redis'] as const) {
  describe(`shaping on the ${kind} store`, () => {
    let redis: RedisServer | undefined;
    let upstream: TestUpstream;
    let arrivals: number[] = [];
    const store = () => (redis ? `store: { type: redis, url: ${redis.url} }` : 'store: { type: memory }');

    before(async () => {
      if (kind === 'redis') redis = await startRedis();
      upstream = await startUpstream((req, res) => {
        arrivals.push(performance.now());
        const arrival = arrivals.length;
        req.resume();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ arrival }));
      });
    });
    after(async () => {
      await upstream.close();
      await redis?.stop();
    });

    it('holds accepted requests and releases them in decision order, refusing the overflow with 429', async () => {
      arrivals = [];
      const gateway = await startGateway(config(store()), { UP: upstream.url });
      try {
        const replies = await Promise.all(Array.from({ length: 9 }, () => call(`${gateway.url}/shaped`, { headers: { 'x-api-key': 'tenant-one' } })));
        assert.deepEqual(tally(replies), { 200: 6, 429: 3 }, 'one served at once, five waiting (burst), three refused');
        const served = replies.filter((reply) => reply.status === 200);
        // Each accepted decision leaves one less slot: remaining orders the decisions.
        const byDecision = [...served].sort((a, b) => Number(b.headers['x-ratelimit-remaining']) - Number(a.headers['x-ratelimit-remaining']));
        assert.deepEqual(
          byDecision.map((reply) => JSON.parse(reply.body).arrival),
          [1, 2, 3, 4, 5, 6],
          'the upstream saw them in decision order',
        );
        assert.equal(new Set(served.map((reply) => reply.headers['x-ratelimit-remaining'])).size, 6);
        // Timers never fire early: five gaps of 1/RATE s at least (minus timer rounding).
        const span = arrivals[arrivals.length - 1]! - arrivals[0]!;
        assert.ok(span >= (5 * 1000) / RATE - 10, `released over ${span} ms`);
        const refused = replies.find((reply) => reply.status === 429)!;
        assert.ok(Number(refused.headers['retry-after']) >= 1);
      } finally {
        await gateway.close();
      }
    });

    it('refuses with 503 once the per-process queue is full', async () => {
      // At one request per second, the six arrive long before the first held one leaves.
      arrivals = [];
      const gateway = await startGateway(config(store(), 'limits: { maxQueued: 2 }'), { UP: upstream.url });
      try {
        const replies = await Promise.all(Array.from({ length: 6 }, () => call(`${gateway.url}/slow`, { headers: { 'x-api-key': 'tenant-two' } })));
        assert.deepEqual(tally(replies), { 200: 3, 503: 3 }, 'one served at once, two held, three past the cap');
        const full = replies.find((reply) => reply.status === 503)!;
        assert.deepEqual(JSON.parse(full.body), { error: 'queue_full' });
        assert.equal(arrivals.length, 3);
      } finally {
        await gateway.close();
      }
    });
  });
}
