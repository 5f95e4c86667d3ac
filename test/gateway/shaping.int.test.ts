// Traffic shaping with a leaky-bucket rule, on both stores: accepted requests
// are held and released in decision order at about the rule's rate; overflow
// gets 429; past the per-process queue cap, 503.
// A loaded machine may deliver the requests over seconds, so the engine is
// gated (gated-engine.ts): the store decides them all at once, and the checks
// read each decision's delayMs instead of timing the releases end to end.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { engineFromConfig } from '../../src/app.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { type GatedEngine, gatedEngine } from './gated-engine.js';
import { call, type Reply, silent, startGateway, startUpstream, type TestUpstream, tally } from '../helpers/gateway-support.js';

const RATE = 5; // per second: 200 ms apart, so all nine arrive before the first held one leaves

const INTERVAL = 1000 / RATE;
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
    // A generous deadline: on a loaded machine a 5 ms miss hands decisions to the fallback, not what is tested here.
    const store = () => (redis ? `store: { type: redis, url: ${redis.url}, deadlineMs: 2000 }` : 'store: { type: memory }');
    /** The gateway on the engine the config builds, gated until `count` requests wait for a decision. */
    const startGated = async (yaml: string, count: number) => {
      const env = { UP: upstream.url };
      const engine = gatedEngine(engineFromConfig(parseConfig(yaml, { source: 'test.yaml', env: { SLUICE_LISTEN: '127.0.0.1:0', ...env } }), silent), count);
      return { engine, gateway: await startGateway(yaml, env, { engine }) };
    };

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
      const { engine, gateway } = await startGated(config(store()), 9);
      try {
        const replies = await Promise.all(Array.from({ length: 9 }, () => call(`${gateway.url}/shaped`, { headers: { 'x-api-key': 'tenant-one' } })));
        assert.deepEqual(tally(replies), { 200: 6, 429: 3 }, 'one served at once, five waiting (burst), three refused');
        const served = replies.filter((reply) => reply.status === 200);
        assert.equal(new Set(served.map((reply) => reply.headers['x-ratelimit-remaining'])).size, 6);
        // Each accepted decision leaves one less slot: remaining orders the decisions.
        const byDecision = [...served].sort((a, b) => Number(b.headers['x-ratelimit-remaining']) - Number(a.headers['x-ratelimit-remaining']));
        assert.deepEqual(
          byDecision.map((reply) => JSON.parse(reply.body).arrival),
          [1, 2, 3, 4, 5, 6],
          'the upstream saw them in decision order',
        );
        assertSpacedAndHeld(engine, byDecision);
        const refused = replies.find((reply) => reply.status === 429)!;
        assert.ok(Number(refused.headers['retry-after']) >= 1);
      } finally {
        await gateway.close();
      }
    });

    it('refuses with 503 once the per-process queue is full', async () => {
      // At one request per second, the six arrive long before the first held one leaves.
      arrivals = [];
      const { gateway } = await startGated(config(store(), 'limits: { maxQueued: 2 }'), 6);
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

    /**
     * The store spaced the served decisions at the rule's rate, and the gateway
     * held each one for its delay. The store read its clock for all of them
     * between the gate opening and the last decision (`window` ms apart at most),
     * so the k-th in decision order waits k intervals, less up to that window.
     * Holding is checked per request from its own decision, so a slow first
     * forward (a new upstream connection on a loaded machine) cannot shorten it.
     */
    function assertSpacedAndHeld(engine: GatedEngine, byDecision: Reply[]): void {
      const allowed = engine.recorded.filter((entry) => entry.decision.allowed);
      const window = Math.max(...allowed.map((entry) => entry.at)) - engine.openedAt;
      byDecision.forEach((reply, k) => {
        const entry = allowed.find((e) => String(e.decision.remaining) === reply.headers['x-ratelimit-remaining'])!;
        const { delayMs } = entry.decision;
        assert.ok(delayMs <= k * INTERVAL + 1 && delayMs >= k * INTERVAL - window - 1, `decision ${k}: delayMs ${delayMs}, window ${window} ms`);
        // Node measures a timer from its loop's cached time, which may trail `at` by a few ms.
        const held = arrivals[JSON.parse(reply.body).arrival - 1]! - entry.at;
        assert.ok(held >= delayMs - 5, `decision ${k}: held ${held} ms for a delay of ${delayMs} ms`);
      });
    }
  });
}
