// One request's flow through the gateway over real HTTP, on the memory store
// and on a real redis-server: status codes, every rate-limit header value,
// Retry-After from the exact deficit, the IETF fields and problem+json bodies.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { QUOTA_EXCEEDED_TYPE } from '../../src/http/headers.js';
import { freePort } from '../helpers/ports.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const CONFIG = `
routes:
  - { id: orders, methods: [POST], path: /orders, upstream: '\${UP}' }
  - { id: order, methods: [GET], path: /orders/:id, upstream: '\${UP}' }
  - { id: api, path: /api/*, upstream: '\${UP}' }
  - { id: upload, methods: [POST], path: /upload, upstream: '\${UP}' }
  - { id: slow, path: /slow, upstream: '\${UP}', timeoutMs: 300 }
  - { id: dead, path: /dead, upstream: '\${DEAD}' }
tenants:
  header: X-Api-Key
  unknownKeys: reject
  keys:
    - { key: key-shop-a-0001, tenant: shop-a }
    - { key: key-shop-b-0002, tenant: shop-b }
    - { key: key-slow-0003, tenant: slowpoke }
defaultRule: { policy: token_bucket, capacity: 5, refillPerSecond: 0.001 }
rules:
  - { tenant: shop-a, route: orders, policy: token_bucket, capacity: 3, refillPerSecond: 0.001 }
  - { tenant: slowpoke, route: '*', policy: token_bucket, capacity: 1, refillPerSecond: 0.25 }
limits: { maxBodyBytes: 1000, maxHeaderBytes: 2048 }
`;

const A = { 'x-api-key': 'key-shop-a-0001' };
const B = { 'x-api-key': 'key-shop-b-0002' };
const SLOW = { 'x-api-key': 'key-slow-0003' };

/** Sends raw bytes and returns the first line of the answer. */
function rawStatusLine(url: string, bytes: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
    });
    socket.on('close', () => resolve(text.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}

for (const kind of ['memory', 'redis'] as const) {
  describe(`gateway flow on the ${kind} store`, () => {
    let redis: RedisServer | undefined;
    let upstream: TestUpstream;
    let dead: number;
    let gateway: RunningSluice;
    const seen: { method?: string; url?: string }[] = [];

    const start = (extra = '') => {
      // A generous deadline: on a loaded machine redis-server may get no CPU for 5 ms, and a decision
      // sent to the fallback is not what these tests check (the resilience tests do).
      const store = redis ? `store: { type: redis, url: ${redis.url}, deadlineMs: 2000 }\n` : 'store: { type: memory }\n';
      return startGateway(CONFIG + store + extra, { UP: upstream.url, DEAD: `http://127.0.0.1:${dead}` });
    };

    before(async () => {
      if (kind === 'redis') redis = await startRedis();
      dead = await freePort();
      upstream = await startUpstream((req, res) => {
        seen.push({ method: req.method, url: req.url });
        if (req.url === '/slow') return; // never answers: the gateway must time out
        let bytes = 0;
        req.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ path: req.url, bytes }));
        });
      });
    });
    after(async () => {
      await upstream.close();
      await redis?.stop();
    });
    beforeEach(async () => {
      if (redis) {
        const client = redis.client();
        await client.flushall();
        client.disconnect();
      }
      seen.length = 0;
      gateway = await start();
    });
    afterEach(() => gateway.close());

    it('forwards allowed requests with X-RateLimit-Limit, -Remaining and -Reset, then answers 429', async () => {
      const replies = [];
      for (let i = 0; i < 4; i++) replies.push(await call(`${gateway.url}/orders`, { method: 'POST', headers: A }));
      assert.deepEqual(replies.map((r) => r.status), [200, 200, 200, 429]);
      assert.deepEqual(replies.map((r) => r.headers['x-ratelimit-limit']), ['3', '3', '3', '3']);
      assert.deepEqual(replies.map((r) => r.headers['x-ratelimit-remaining']), ['2', '1', '0', '0']);
      // One token takes 1,000 s to come back: the bucket is full again after 1,000 s per spent token.
      assert.deepEqual(replies.map((r) => r.headers['x-ratelimit-reset']), ['1000', '2000', '3000', '3000']);
      assert.equal(JSON.parse(replies[0]!.body).path, '/orders');
      assert.equal(seen.length, 3, 'the refused request never reaches the upstream');

      const refused = replies[3]!;
      assert.equal(refused.headers['retry-after'], '1000');
      assert.equal(refused.headers['content-type'], 'application/json');
      const body = JSON.parse(refused.body);
      assert.equal(body.error, 'rate_limited');
      assert.ok(body.retryAfterMs > 999_000 && body.retryAfterMs <= 1_000_000, `retryAfterMs ${body.retryAfterMs}`);
      assert.deepEqual(Object.keys(body), ['error', 'retryAfterMs']);
    });

    it('takes Retry-After from the exact deficit (capacity 1, refill 0.25/s → 4 s)', async () => {
      const first = await call(`${gateway.url}/api/x`, { headers: SLOW });
      const second = await call(`${gateway.url}/api/x`, { headers: SLOW });
      assert.equal(first.status, 200);
      assert.equal(first.headers['x-ratelimit-reset'], '4');
      assert.equal(second.status, 429);
      assert.equal(second.headers['retry-after'], '4');
      assert.equal(second.headers['x-ratelimit-remaining'], '0');
      const { retryAfterMs } = JSON.parse(second.body);
      assert.ok(retryAfterMs > 3_000 && retryAfterMs <= 4_000, `retryAfterMs ${retryAfterMs}`);
    });

    it('resolves rules most specific first and keeps tenants and routes apart', async () => {
      const b = await call(`${gateway.url}/orders`, { method: 'POST', headers: B });
      assert.equal(b.headers['x-ratelimit-limit'], '5', 'shop-b falls back to the default rule');
      const aOther = await call(`${gateway.url}/orders/42`, { headers: A });
      assert.equal(aOther.status, 200);
      assert.equal(aOther.headers['x-ratelimit-limit'], '5', 'shop-a has no rule on route order');
      assert.equal(aOther.headers['x-ratelimit-remaining'], '4');
      const aOrders = await call(`${gateway.url}/orders`, { method: 'POST', headers: A });
      assert.equal(aOrders.headers['x-ratelimit-remaining'], '2', 'a separate bucket per route');
    });

    it('answers 401 without a key or with an unknown key, and 404 without a route', async () => {
      const missing = await call(`${gateway.url}/orders`, { method: 'POST' });
      assert.equal(missing.status, 401);
      assert.deepEqual(JSON.parse(missing.body), { error: 'missing_api_key' });
      const unknown = await call(`${gateway.url}/orders`, { method: 'POST', headers: { 'x-api-key': 'not-a-known-key' } });
      assert.equal(unknown.status, 401);
      assert.deepEqual(JSON.parse(unknown.body), { error: 'unknown_api_key' });
      for (const [method, path] of [
        ['GET', '/nowhere'],
        ['GET', '/orders'],
        ['GET', '/orders/1/items'],
        ['POST', '/apix'],
      ] as const) {
        const reply = await call(`${gateway.url}${path}`, { method, headers: B });
        assert.equal(reply.status, 404, `${method} ${path}`);
        assert.deepEqual(JSON.parse(reply.body), { error: 'no_route' });
      }
      for (const path of ['/api', '/api/', '/api/a/b/c?q=1', '/orders/abc']) {
        assert.equal((await call(`${gateway.url}${path}`, { headers: B })).status, 200, path);
      }
      assert.equal(seen.length, 4, 'no refused request reached the upstream');
    });

    it('answers 413 for a declared or streamed body over maxBodyBytes', async () => {
      const ok = await call(`${gateway.url}/upload`, { method: 'POST', headers: B, body: 'x'.repeat(1000) });
      assert.equal(ok.status, 200);
      assert.equal(JSON.parse(ok.body).bytes, 1000);
      const declared = await call(`${gateway.url}/upload`, { method: 'POST', headers: B, body: 'x'.repeat(1001) });
      assert.equal(declared.status, 413);
      assert.deepEqual(JSON.parse(declared.body), { error: 'body_too_large' });
      const streamed = await rawStatusLine(
        gateway.url,
        'POST /upload HTTP/1.1\r\nHost: x\r\nX-Api-Key: key-shop-b-0002\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n' +
          `3e8\r\n${'y'.repeat(1000)}\r\n3e8\r\n${'y'.repeat(1000)}\r\n0\r\n\r\n`,
      );
      assert.equal(streamed, 'HTTP/1.1 413 Payload Too Large');
    });

    it('answers 400 to a malformed request and 431 to oversized headers', async () => {
      assert.equal(await rawStatusLine(gateway.url, 'NOT HTTP AT ALL\r\n\r\n'), 'HTTP/1.1 400 Bad Request');
      assert.equal(await rawStatusLine(gateway.url, 'GET /x HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'), 'HTTP/1.1 400 Bad Request');
      const big = await rawStatusLine(gateway.url, `GET /api/x HTTP/1.1\r\nHost: x\r\nX-Big: ${'z'.repeat(4096)}\r\n\r\n`);
      assert.equal(big, 'HTTP/1.1 431 Request Header Fields Too Large');
      assert.equal((await call(`${gateway.url}/api/x`, { headers: B })).status, 200, 'the gateway still serves');
    });

    it('answers 502 when the upstream refuses connections and 504 when it is too slow', async () => {
      const unreachable = await call(`${gateway.url}/dead`, { headers: B });
      assert.equal(unreachable.status, 502);
      assert.deepEqual(JSON.parse(unreachable.body), { error: 'upstream_unreachable' });
      assert.equal(unreachable.headers['x-ratelimit-remaining'], '4', 'the limit headers are still given');
      const slow = await call(`${gateway.url}/slow`, { headers: B });
      assert.equal(slow.status, 504);
      assert.deepEqual(JSON.parse(slow.body), { error: 'upstream_timeout' });
    });

    it('sends the IETF RateLimit fields and problem+json when the config asks', async () => {
      await gateway.close();
      gateway = await start('headers: { ietf: true, problemJson: true }\n');
      const replies = [];
      for (let i = 0; i < 4; i++) replies.push(await call(`${gateway.url}/orders`, { method: 'POST', headers: A }));
      assert.equal(replies[0]!.headers['ratelimit-policy'], '"orders";q=3;w=3000');
      assert.equal(replies[0]!.headers.ratelimit, '"orders";r=2;t=1000');
      assert.equal(replies[2]!.headers.ratelimit, '"orders";r=0;t=3000');
      const refused = replies[3]!;
      assert.equal(refused.status, 429);
      assert.equal(refused.headers['ratelimit-policy'], '"orders";q=3;w=3000');
      assert.equal(refused.headers.ratelimit, '"orders";r=0;t=1000');
      assert.equal(refused.headers['content-type'], 'application/problem+json');
      const problem = JSON.parse(refused.body);
      assert.equal(problem.type, QUOTA_EXCEEDED_TYPE);
      assert.equal(problem.title, 'Too Many Requests');
      assert.equal(problem.status, 429);
      assert.match(problem.detail, /limit orders.*1000 seconds/);
    });
  });
}
