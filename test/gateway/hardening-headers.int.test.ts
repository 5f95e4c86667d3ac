// Issue 37, items 5 and 13: what a client can make the upstream believe. An
// API key sent twice is refused (it would be a fresh tenant here and the real
// one upstream); forwarding headers Sluice does not vouch for, and headers with
// `_` in their names, never reach the upstream; behind a trusted proxy only the
// forwarding header Sluice reads is kept; an invalid Host is a 400.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { rawClient, statusOf } from './raw-client.js';
import { recordingUpstream, sendRaw } from './hardening-support.js';
import { startGateway, type TestUpstream } from '../helpers/gateway-support.js';

const KEY = 'shop-a-key-0001';
const YAML = (extra: string) => `
routes: [{ id: orders, path: /orders, upstream: '\${UP}' }]
tenants: { unknownKeys: default-rule, keys: [{ key: ${KEY}, tenant: shop-a }] }
defaultRule: { policy: token_bucket, capacity: 100, refillPerSecond: 0.001 }
rules: [{ tenant: shop-a, route: '*', policy: token_bucket, capacity: 2, refillPerSecond: 0.001 }]
${extra}
`;

/** Sends `head` (a whole request without its final CRLF) on a fresh socket and gives the status. */
async function rawStatus(url: string, head: string): Promise<number | undefined> {
  const client = await rawClient(url, `${head}\r\n\r\n`);
  await client.closed;
  return statusOf(client.received());
}

describe('hardening: headers', () => {
  let upstream: TestUpstream & { paths: string[] };
  let gateway: RunningSluice;
  let behindProxy: RunningSluice;

  before(async () => {
    upstream = await recordingUpstream();
    gateway = await startGateway(YAML(''), { UP: upstream.url });
    behindProxy = await startGateway(YAML("clientIp: { trustedProxies: ['127.0.0.1/32'] }"), { UP: upstream.url });
  });
  after(async () => {
    await gateway.close();
    await behindProxy.close();
    await upstream.close();
  });

  it('refuses an API key sent twice, in one header or two, with 400 duplicate_api_key', async () => {
    const before = upstream.paths.length;
    for (let i = 0; i < 4; i++) {
      const reply = await sendRaw(gateway.url, 'GET', '/orders', { 'x-api-key': `${KEY}, ${KEY}` });
      assert.equal(reply.status, 400, reply.body);
      assert.equal(JSON.parse(reply.body).error, 'duplicate_api_key');
    }
    const host = new URL(gateway.url).host;
    for (let i = 0; i < 4; i++) {
      assert.equal(await rawStatus(gateway.url, `GET /orders HTTP/1.1\r\nHost: ${host}\r\nX-Api-Key: ${KEY}\r\nX-Api-Key: ${KEY}\r\nConnection: close`), 400);
    }
    assert.equal(upstream.paths.length, before, 'none reached the upstream');
    // shop-a's limit of 2 is still whole: the refused ones took nothing from it, and the third is refused.
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await sendRaw(gateway.url, 'GET', '/orders', { 'x-api-key': KEY })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
  });

  it('drops forwarding headers it does not vouch for, and names with underscores', async () => {
    const reply = await sendRaw(behindProxy.url, 'GET', '/orders', {
      'x-api-key': 'any-unknown-key-1',
      X_Forwarded_For: '6.6.6.6',
      'x-real-ip': '6.6.6.6',
      'x-forwarded-port': '443',
      'x-forwarded-prefix': '/admin',
      'x-original-url': '/internal/admin',
      'x-http-method-override': 'DELETE',
      'x-custom': 'kept',
    });
    assert.equal(reply.status, 200, reply.body);
    const seen = JSON.parse(reply.body).headers as Record<string, string>;
    for (const name of ['x_forwarded_for', 'x-real-ip', 'x-forwarded-port', 'x-forwarded-prefix', 'x-original-url', 'x-http-method-override']) assert.equal(seen[name], undefined, name);
    assert.equal(seen['x-custom'], 'kept');
  });

  it('behind a trusted proxy, keeps only the forwarding header it reads', async () => {
    const reply = await sendRaw(behindProxy.url, 'GET', '/orders', { 'x-api-key': 'any-unknown-key-2', 'x-forwarded-for': '203.0.113.7', forwarded: 'for=6.6.6.6;host=evil.example' });
    const seen = JSON.parse(reply.body).headers as Record<string, string>;
    assert.equal(seen['x-forwarded-for'], '203.0.113.7, 127.0.0.1', 'the header it reads: the proxy’s hops, then this one');
    assert.match(seen.forwarded!, /^for=127\.0\.0\.1;proto=http;host=/, 'the one it does not read starts again at this hop');
    assert.doesNotMatch(seen.forwarded!, /6\.6\.6\.6|evil/);
  });

  it('refuses an invalid Host with 400 invalid_host (never copied into X-Forwarded-Host)', async () => {
    const before = upstream.paths.length;
    for (const host of ['evil.example/x', 'a b', 'evil"<x>', 'a..b:80:90']) {
      const reply = await sendRaw(gateway.url, 'GET', '/orders', { host, 'x-api-key': KEY });
      assert.equal(reply.status, 400, `${host}: ${reply.body}`);
      assert.equal(JSON.parse(reply.body).error, 'invalid_host');
    }
    const hostname = new URL(gateway.url).host;
    assert.equal(await rawStatus(gateway.url, `GET /orders HTTP/1.1\r\nHost: ${hostname}\r\nHost: other.example\r\nX-Api-Key: ${KEY}\r\nConnection: close`), 400, 'two Host headers');
    assert.equal(upstream.paths.length, before);
  });
});
