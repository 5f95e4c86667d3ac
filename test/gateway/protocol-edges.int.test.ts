// Protocol edges of the gateway's front: a route timeout fires at its value,
// CONNECT gets a proper 501 instead of a dropped socket, a WebSocket upgrade
// to an upstream that does not speak it gets that upstream's answer, and an
// ignorable upgrade (h2c) is served as plain HTTP/1.1.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { rawClient, statusOf, settlesWithin } from './raw-client.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { until } from '../helpers/poll.js';

const YAML = `
routes:
  - { id: slow, path: /slow, upstream: '\${UP}', timeoutMs: 300 }
  - { id: ws, path: /ws, upstream: '\${UP}' }
tenants: { unknownKeys: default-rule }
`;

const KEY = { 'x-api-key': 'shop-a' };

describe('protocol edges', () => {
  let upstream: TestUpstream;
  let gateway: RunningSluice;

  before(async () => {
    upstream = await startUpstream((req, res) => {
      req.resume();
      if (req.url === '/slow') setTimeout(() => res.end('{}'), 3_000).unref();
      else res.end(JSON.stringify({ upgrade: req.headers.upgrade ?? null }));
    });
    gateway = await startGateway(YAML, { UP: upstream.url });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('answers 504 at the route timeout (300 ms), not a second later', async () => {
    const started = performance.now();
    const reply = await call(`${gateway.url}/slow`, { headers: KEY });
    const took = performance.now() - started;
    assert.equal(reply.status, 504);
    assert.ok(took < 700, `504 after ${Math.round(took)} ms`);
  });

  it('answers CONNECT with 501 and a JSON body, then closes', async () => {
    const client = await rawClient(gateway.url, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    assert.ok(await settlesWithin(client.closed, 5_000));
    assert.equal(statusOf(client.received()), 501);
    assert.match(client.received(), /Connection: close/i);
    assert.match(client.received(), /\{"error":"method_not_supported"\}/);
  });

  it("relays a non-WebSocket upstream's answer to a WebSocket upgrade, and serves an h2c upgrade as HTTP/1.1", async () => {
    const upgrade = (protocol: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(`${gateway.url}/ws`, { headers: { ...KEY, connection: 'upgrade', upgrade: protocol } }, (res) => {
          let body = '';
          res.on('data', (chunk) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('upgrade', () => reject(new Error('upgraded')));
        req.on('error', reject);
        req.end();
      });
    // An upstream that does not speak WebSocket answers the upgrade as a plain request: that answer is relayed.
    const ws = await upgrade('websocket');
    assert.equal(ws.status, 200);
    assert.deepEqual(JSON.parse(ws.body), { upgrade: 'websocket' });
    const h2c = await upgrade('h2c');
    assert.equal(h2c.status, 200);
    assert.deepEqual(JSON.parse(h2c.body), { upgrade: null }, 'the Upgrade header is not forwarded');
  });
});

// configuration.md: `Keep-Alive: timeout=N` announces keepAliveTimeoutMs in whole
// seconds, and the gateway keeps the idle connection open past N (node's one-second
// keep-alive buffer), so a client that reuses it at the announced limit never races
// the close. Only lower bounds are asserted: a busy machine can only close later.
describe('keep-alive timeout', () => {
  let upstream: TestUpstream;
  let gateway: RunningSluice;

  before(async () => {
    upstream = await startUpstream();
    gateway = await startGateway(`${YAML}limits: { keepAliveTimeoutMs: 2000 }\n`, { UP: upstream.url });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('announces timeout=2 for 2000 ms and still serves a request on the connection at the announced limit', async () => {
    const request = 'GET /ws HTTP/1.1\r\nHost: x\r\nX-Api-Key: shop-a\r\n\r\n';
    const client = await rawClient(gateway.url, request);
    await until(() => /\r\n\r\n/.test(client.received()), 'the answer arriving');
    assert.match(client.received(), /\r\nKeep-Alive: timeout=2\r\n/i);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const before = client.received().length;
    client.socket.write(request);
    await until(() => statusOf(client.received().slice(before)) !== undefined, 'the answer arriving');
    assert.equal(statusOf(client.received().slice(before)), 200, 'the connection was still open at the announced limit');
    await client.closed; // and the gateway closes it by itself once idle again
  });
});
