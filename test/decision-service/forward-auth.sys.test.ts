// /decide (forward-auth) and /json on the decision listener, on real Redis:
// each forwarded-header family, the client IP believed only from a trusted
// proxy, the configurable refusal and no-route answers, bad /json bodies, and
// each rule's onStoreDown once Redis is killed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call } from '../helpers/gateway-support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { descriptor, rlsClient, startDecisionSluice } from '../helpers/decision-service-support.js';

const DOWN_DOMAIN = `
domain: down
descriptors:
  - key: mode
    value: open
    rate_limit: { unit: minute, requests_per_unit: 5 }
    sluice: { onStoreDown: open }
  - key: mode
    value: closed
    rate_limit: { unit: minute, requests_per_unit: 5 }
    sluice: { onStoreDown: closed }
`;

function yamlFor(redisUrl: string, envoyFile: string, extra = ''): string {
  return `
routes:
  - { id: orders, methods: [POST], path: /orders, upstream: 'http://127.0.0.1:9' }
  - { id: login, path: /login, upstream: 'http://127.0.0.1:9', anonymous: true, limits: [{ id: per-ip, key: ip, rule: { policy: sliding_window_log, limit: 1, windowMs: 60000 } }] }
  - { id: closed, path: /closed, upstream: 'http://127.0.0.1:9', anonymous: true, limits: [{ id: shut, key: route, rule: { policy: fixed_window, limit: 9, windowMs: 60000, onStoreDown: closed } }] }
  - { id: pair, path: /pair, upstream: 'http://127.0.0.1:9', anonymous: true, limits: [{ id: pair-burst, key: route, rule: { policy: sliding_window_log, limit: 2, windowMs: 60000 } }, { id: pair-daily, key: route, rule: { policy: fixed_window, limit: 100, windowMs: 86400000 } }] }
tenants: { keys: [{ key: shop-a-demo-key, tenant: shop-a }] }
headers: { ietf: true }
rules: [{ tenant: shop-a, route: orders, policy: token_bucket, capacity: 2, refillPerSecond: 0.01 }]
clientIp: { trustedProxies: [127.0.0.2/32] }
store: { url: ${redisUrl}, deadlineMs: 2000 }
decisionService:
  envoyConfig: ${JSON.stringify(envoyFile)}
  forwardAuthProxy: caddy
${extra}`;
}

describe('forward-auth /decide and /json', () => {
  let redis: RedisServer;
  let sluice: RunningSluice;
  let dir: string;
  let envoyFile: string;
  const decide = (headers: Record<string, string>, url = sluice.decisionUrl!) => call(`${url}/decide`, { headers });
  before(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'sluice-fa-'));
    envoyFile = join(dir, 'down.yaml');
    writeFileSync(envoyFile, DOWN_DOMAIN);
    sluice = await startDecisionSluice(yamlFor(redis.url, envoyFile));
  });
  after(async () => {
    await sluice?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('X-Forwarded-Method/-Uri (Traefik, Caddy, APISIX): 200 200 429 with the headers', async () => {
    const replies = [];
    for (let i = 0; i < 3; i++) replies.push(await decide({ 'x-forwarded-method': 'POST', 'x-forwarded-uri': '/orders?x=1', 'x-forwarded-host': 'shop.example', 'x-api-key': 'shop-a-demo-key' }));
    assert.deepEqual(replies.map((reply) => reply.status), [200, 200, 429]);
    assert.deepEqual(replies.map((reply) => reply.headers['x-ratelimit-remaining']), ['1', '0', '0']);
    assert.match(String(replies[2]!.headers['retry-after']), /^[1-9]\d*$/);
  });

  it('a route with several limits: the IETF fields list every limit, as on the gateway', async () => {
    const replies = [];
    for (let i = 0; i < 3; i++) replies.push(await decide({ 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/pair' }));
    assert.deepEqual(replies.map((reply) => reply.status), [200, 200, 429]);
    for (const reply of replies) assert.match(String(reply.headers['ratelimit-policy']), /^"pair-burst";q=2;w=60, "pair-daily";q=100;w=86400$/);
    assert.match(String(replies[0]!.headers.ratelimit), /"pair-burst";r=1;.*"pair-daily";r=99;/);
    assert.equal(replies[2]!.headers['x-ratelimit-limit'], '2', 'X-RateLimit-* describe the refusing limit');
  });

  it("behind Caddy, nginx's X-Original-Method/-URI are a client's headers: not read", async () => {
    const reply = await decide({ 'x-original-method': 'POST', 'x-original-uri': '/orders', 'x-api-key': 'shop-a-demo-key' });
    assert.equal(reply.status, 400, 'no X-Forwarded-Uri: no original URI');
  });

  it('the method takes part in the route match; the API key comes from the forwarded headers', async () => {
    assert.equal((await decide({ 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/orders', 'x-api-key': 'shop-a-demo-key' })).status, 404);
    assert.equal((await decide({ 'x-forwarded-method': 'POST', 'x-forwarded-uri': '/orders' })).status, 401);
    assert.equal((await decide({ 'x-forwarded-method': 'POST', 'x-forwarded-uri': '/orders', 'x-api-key': 'wrong-key-123' })).status, 401);
    assert.equal((await decide({ 'x-forwarded-method': 'POST' })).status, 400, 'no original URI');
  });

  it('X-Forwarded-For from an untrusted caller is ignored: the caller itself is the client', async () => {
    const first = await decide({ 'x-forwarded-uri': '/login', 'x-forwarded-for': '203.0.113.1' });
    const second = await decide({ 'x-forwarded-uri': '/login', 'x-forwarded-for': '203.0.113.2' });
    assert.deepEqual([first.status, second.status], [200, 429], 'one bucket (127.0.0.1), whatever the header says');
  });

  it('X-Forwarded-For from a trusted proxy names the client', async () => {
    // 127.0.0.2 is trusted: connect from it.
    const ask = (client: string) =>
      new Promise<number>((done, fail) => {
        const req = httpGet(`${sluice.decisionUrl}/decide`, { localAddress: '127.0.0.2', headers: { 'x-forwarded-uri': '/login', 'x-forwarded-for': client } }, (res) => {
          res.resume();
          res.on('end', () => done(res.statusCode ?? 0));
        });
        req.on('error', fail);
      });
    assert.deepEqual([await ask('198.51.100.1'), await ask('198.51.100.2'), await ask('198.51.100.1')], [200, 200, 429]);
  });

  it('/json: the request and response as proto3 JSON; OVER_LIMIT answers 429', async () => {
    const body = JSON.stringify({ domain: 'down', hitsAddend: 4, descriptors: [descriptor(['mode', 'open'])] });
    const first = await call(`${sluice.decisionUrl}/json`, { method: 'POST', body });
    assert.equal(first.status, 200);
    assert.deepEqual(JSON.parse(first.body).statuses[0], { code: 'OK', currentLimit: { requestsPerUnit: 5, unit: 'MINUTE' }, limitRemaining: 1, durationUntilReset: JSON.parse(first.body).statuses[0].durationUntilReset });
    assert.match(JSON.parse(first.body).statuses[0].durationUntilReset, /^\d+s$/);
    const second = await call(`${sluice.decisionUrl}/json`, { method: 'POST', body });
    assert.equal(second.status, 429);
    assert.equal(JSON.parse(second.body).overallCode, 'OVER_LIMIT');
    const blocked = JSON.stringify({ domain: 'down', descriptors: [{ entries: [{ key: 'mode' }], limit: { requestsPerUnit: 0, unit: 'WEEK' } }] });
    assert.equal((await call(`${sluice.decisionUrl}/json`, { method: 'POST', body: blocked })).status, 429, 'a limit of 0 refuses, an entry without a value is valid');
  });

  it('/json: a bad body is a 400 naming the field', async () => {
    const cases: [string, string][] = [
      ['{', 'body'],
      ['[]', 'body'],
      [JSON.stringify({ domain: 5, descriptors: [] }), 'domain'],
      [JSON.stringify({ domain: 'down', descriptors: {} }), 'descriptors'],
      [JSON.stringify({ domain: 'down', descriptors: [] }), 'descriptors'],
      [JSON.stringify({ domain: 'down', descriptors: [{ entries: [{ key: 'mode', value: 5 }] }] }), 'descriptors[0].entries[0].value'],
      [JSON.stringify({ domain: 'down', descriptors: [{ entries: [{ key: 'a', value: 'b' }], hitsAddend: -1 }] }), 'descriptors[0].hitsAddend'],
    ];
    for (const [body, field] of cases) {
      const reply = await call(`${sluice.decisionUrl}/json`, { method: 'POST', body });
      assert.equal(reply.status, 400, body);
      assert.equal(JSON.parse(reply.body).field, field, body);
    }
  });

  it('refusedStatus and noRoute: allow are configurable', async () => {
    const other = await startDecisionSluice(yamlFor(redis.url, envoyFile, '  refusedStatus: 403\n  noRoute: allow\n'), {}, { shutdownGraceMs: 200 });
    try {
      const headers = { 'x-forwarded-method': 'POST', 'x-forwarded-uri': '/orders', 'x-api-key': 'shop-a-demo-key' };
      assert.equal((await decide(headers, other.decisionUrl)).status, 403, 'shop-a is still over (shared Redis)');
      assert.equal((await decide({ 'x-forwarded-uri': '/unrouted', 'x-api-key': 'shop-a-demo-key' }, other.decisionUrl)).status, 200);
    } finally {
      await other.close();
    }
  });

  it('Redis killed: each rule’s onStoreDown decides (gRPC: open → OK, closed → OVER_LIMIT; /decide: closed → 503)', async () => {
    await redis.kill();
    const client = rlsClient(sluice.grpcAddress!);
    try {
      const open = await client.ask({ domain: 'down', descriptors: [descriptor(['mode', 'open'], )] });
      const closed = await client.ask({ domain: 'down', descriptors: [descriptor(['mode', 'closed'])] });
      assert.equal(open.overall_code, 'OK');
      assert.equal(closed.overall_code, 'OVER_LIMIT');
      const reply = await decide({ 'x-forwarded-uri': '/closed' });
      assert.equal(reply.status, 503);
      assert.equal(JSON.parse(reply.body).error, 'store_unavailable');
    } finally {
      client.close();
    }
  });
});
