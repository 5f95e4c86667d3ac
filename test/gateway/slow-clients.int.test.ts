// Slow clients against the gateway's listener: header drippers and silent
// connections are cut at limits.headerTimeoutMs with 408; requests whose body
// stalls are answered 408 after limits.bodyIdleTimeoutMs without ever reaching
// the upstream; normal traffic is served all the while.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { type RawClient, rawClient, statusOf, settlesWithin } from './raw-client.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const YAML = `
routes: [{ id: orders, path: /orders, upstream: '\${UP}' }]
tenants: { unknownKeys: default-rule, keys: [{ key: spent-key, tenant: spent }] }
defaultRule: { policy: token_bucket, capacity: 100000, refillPerSecond: 100000 }
limits: { headerTimeoutMs: 500, requestTimeoutMs: 20000, bodyIdleTimeoutMs: 1000 }
`;

const KEY = { 'x-api-key': 'shop-a' };

/** A tenant whose one unit the test spends first, so its next request is refused. */
const SPENT_RULE = `
rules: [{ tenant: spent, route: orders, policy: token_bucket, capacity: 1, refillPerSecond: 0.001 }]
`;

describe('slow clients', () => {
  let upstream: TestUpstream;
  let gateway: RunningSluice;
  let upstreamRequests = 0;
  let upstreamConnections = 0;
  let peakConnections = 0;

  before(async () => {
    upstream = await startUpstream((req, res) => {
      upstreamRequests++;
      req.resume();
      req.on('end', () => res.end('{}'));
    });
    upstream.server.on('connection', (socket) => {
      peakConnections = Math.max(peakConnections, ++upstreamConnections);
      socket.once('close', () => upstreamConnections--);
    });
    gateway = await startGateway(YAML + SPENT_RULE, { UP: upstream.url });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('cuts header drippers and silent connections at the header timeout with 408, serving others meanwhile', async () => {
    const silent = await Promise.all(Array.from({ length: 50 }, () => rawClient(gateway.url)));
    const drippers = await Promise.all(Array.from({ length: 50 }, () => rawClient(gateway.url, 'GET /orders HTTP/1.1\r\n')));
    const drip = setInterval(() => {
      for (const client of drippers) if (!client.socket.destroyed) client.socket.write('X');
    }, 100);
    try {
      const normal = [];
      for (let i = 0; i < 10; i++) normal.push((await call(`${gateway.url}/orders`, { headers: KEY })).status);
      assert.deepEqual(normal, Array(10).fill(200));
      const all: RawClient[] = [...silent, ...drippers];
      // Node's default would keep them for 90 s; 500 ms configured, checked every 50 ms.
      assert.ok(await settlesWithin(Promise.all(all.map((client) => client.closed)), 5_000), 'every slow client was closed');
      assert.deepEqual(new Set(all.map((client) => statusOf(client.received()))), new Set([408]));
    } finally {
      clearInterval(drip);
      for (const client of [...silent, ...drippers]) client.socket.destroy();
    }
  });

  it('closes the connection of a refused request whose body has not arrived, instead of waiting for it', async () => {
    const first = await call(`${gateway.url}/orders`, { method: 'POST', headers: { 'x-api-key': 'spent-key' }, body: '0123456789' });
    assert.equal(first.status, 200);
    const client = await rawClient(gateway.url, 'POST /orders HTTP/1.1\r\nHost: x\r\nX-Api-Key: spent-key\r\nContent-Length: 10\r\n\r\n');
    try {
      // requestTimeoutMs is 20 s here: before, the refused client kept its socket until then.
      assert.ok(await settlesWithin(client.closed, 10_000), 'the gateway closed the refused connection');
      assert.equal(statusOf(client.received()), 429);
      assert.match(client.received(), /\r\nConnection: close\r\n/i);
    } finally {
      client.socket.destroy();
    }
  });

  it('never forwards a stalled body: 408 after the body timeout, normal POSTs answered meanwhile', async () => {
    upstreamRequests = 0;
    peakConnections = upstreamConnections;
    const head = 'POST /orders HTTP/1.1\r\nHost: x\r\nX-Api-Key: shop-a\r\nContent-Length: 10\r\n\r\n';
    const stalled = await Promise.all(Array.from({ length: 600 }, () => rawClient(gateway.url, head)));
    try {
      const normal = await Promise.all(Array.from({ length: 20 }, () => call(`${gateway.url}/orders`, { method: 'POST', headers: KEY, body: '0123456789' })));
      assert.deepEqual(
        normal.map((reply) => reply.status),
        Array(20).fill(200),
      );
      assert.ok(await settlesWithin(Promise.all(stalled.map((client) => client.closed)), 10_000), 'every stalled client was answered and closed');
      assert.deepEqual(new Set(stalled.map((client) => statusOf(client.received()))), new Set([408]));
      assert.match(stalled[0]!.received(), /\{"error":"request_timeout"\}/);
      assert.equal(upstreamRequests, 20, 'the upstream saw only the normal requests');
      assert.ok(peakConnections <= 20, `upstream connections peaked at ${peakConnections}`);
    } finally {
      for (const client of stalled) client.socket.destroy();
    }
  });

  it('streams a body larger than bufferBodyBytes, and cuts it when it stalls', async () => {
    upstreamRequests = 0;
    const big = Buffer.alloc(200_000, 'a');
    const reply = await call(`${gateway.url}/orders`, { method: 'POST', headers: KEY, body: big });
    assert.equal(reply.status, 200);
    const head = `POST /orders HTTP/1.1\r\nHost: x\r\nX-Api-Key: shop-a\r\nContent-Length: ${big.length}\r\n\r\n`;
    const client = await rawClient(gateway.url, head + big.subarray(0, 100_000).toString());
    try {
      assert.ok(await settlesWithin(client.closed, 5_000), 'the stalled stream was cut');
      assert.equal(statusOf(client.received()), 408);
    } finally {
      client.socket.destroy();
    }
  });
});
