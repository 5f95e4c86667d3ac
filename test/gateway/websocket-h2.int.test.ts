// WebSocket over HTTP/2 through the gateway (RFC 8441, issue 21): node's http2
// client opens extended CONNECT streams (frames by ws's Sender and Receiver),
// the upstream is a `ws` server speaking HTTP/1.1. The stream is one request
// for the limits (refused → 429 before any upstream connection), frames go
// both ways, the tunnel counts in /metrics, closes with NO_ERROR when idle and
// on drain; the gateway makes the upstream handshake with a key of its own and
// refuses an upstream whose Accept does not answer it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type ClientHttp2Session, connect as connectHttp2 } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { openHttp2WebSocket } from './h2-websocket-client.js';
import { startGateway } from '../helpers/gateway-support.js';
import { type EchoUpstream, startEcho } from '../helpers/ws-echo.js';

const yaml = (certs: TestCertificates) => `
tls: { cert: ${certs.serverCert}, key: ${certs.serverKey} }
routes:
  - id: live
    path: /live/*
    upstream: '\${UP}'
    stripPrefix: true
    limits: [{ id: live-upgrades, key: tenant, rule: { policy: token_bucket, capacity: 3, refillPerSecond: 0.001 } }]
  - { id: refuse, path: /refuse, upstream: '\${UP}' }
  - { id: bad-accept, path: /bad-accept, upstream: '\${UP}' }
  - id: capped
    path: /capped/*
    upstream: '\${UP}'
    limits: [{ id: one-tunnel, kind: concurrency, key: tenant, max: 1 }]
tenants: { keys: [{ key: h2ws-test-key-1, tenant: shop-a }] }
limits:
  websocketIdleTimeoutMs: \${IDLE:-300000}
`;
const KEY = { 'x-api-key': 'h2ws-test-key-1' };
/** A key an HTTP/2 client has no business sending (RFC 8441 has none): never forwarded. */
const CLIENT_KEY = 'ZnJvbS10aGUtY2xpZW50LTE2';
const openTunnels = async () => /sluice_websocket_tunnels_open\{route="live"\} (\d+)/.exec(await resilienceRegistry.metrics())?.[1];

describe('WebSocket over HTTP/2 through the gateway', () => {
  let certs: TestCertificates;
  let upstream: EchoUpstream;
  let gateway: RunningSluice;
  let session: ClientHttp2Session;

  before(async () => {
    certs = makeCertificates();
    upstream = await startEcho();
    gateway = await startGateway(yaml(certs), { UP: upstream.url });
    session = connectHttp2(gateway.url, { ca: readFileSync(certs.ca) });
  });
  after(async () => {
    session?.close();
    await gateway?.close();
    await upstream?.close();
    certs?.remove();
  });

  it('advertises SETTINGS_ENABLE_CONNECT_PROTOCOL and carries text and binary frames both ways', async () => {
    if (!session.remoteSettings.enableConnectProtocol) await new Promise((resolve) => session.once('remoteSettings', resolve));
    assert.equal(session.remoteSettings.enableConnectProtocol, true);
    const ws = await openHttp2WebSocket(session, '/live/feed?x=1', { ...KEY, 'sec-websocket-key': CLIENT_KEY });
    assert.equal(ws.status, 200);
    assert.equal(ws.headers['x-ratelimit-limit'], '3');
    assert.equal(ws.headers['x-ratelimit-remaining'], '2');
    assert.equal(ws.headers['sec-websocket-accept'], undefined, "the upstream's Accept answered the gateway's key, not the client's");
    ws.send('hello');
    assert.deepEqual(await ws.next(), { data: Buffer.from('hello'), binary: false });
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    ws.send(bytes);
    assert.deepEqual(await ws.next(), { data: bytes, binary: true });
    const seen = upstream.upgrades.at(-1)!;
    assert.equal(seen.path, '/feed?x=1', 'the route rewrote the path');
    assert.equal(seen.headers['x-forwarded-proto'], 'https');
    assert.match(String(seen.headers['sec-websocket-key']), /^[A-Za-z0-9+/]{22}==$/, 'the gateway sent a key of its own, and only that one');
    assert.notEqual(seen.headers['sec-websocket-key'], CLIENT_KEY);
    assert.equal(await openTunnels(), '1');
    ws.stream.end(); // the client is done: the gateway ends the upstream side, then the stream
    assert.deepEqual(await ws.closed, { rstCode: 0, error: false });
    assert.equal(await openTunnels(), '0');
  });

  it('counts the stream as a request: past the limit it is refused 429 before any upstream connection', async () => {
    const before = upstream.upgrades.length;
    const second = await openHttp2WebSocket(session, '/live/a', KEY);
    const third = await openHttp2WebSocket(session, '/live/b', KEY);
    const fourth = await openHttp2WebSocket(session, '/live/c', KEY);
    assert.deepEqual([second.status, third.status, fourth.status], [200, 200, 429]);
    assert.ok(fourth.headers['retry-after'], 'the 429 carries Retry-After');
    assert.equal(upstream.upgrades.length, before + 2, 'the refused stream never reached the upstream');
    assert.equal((await openHttp2WebSocket(session, '/live/d')).status, 401);
    second.stream.end();
    third.stream.end();
    await Promise.all([second.closed, third.closed]);
  });

  it("relays an upstream's refusal, and answers 502 to a 101 whose Accept does not answer the gateway's key", async () => {
    assert.equal((await openHttp2WebSocket(session, '/refuse', KEY)).status, 403);
    const bad = await openHttp2WebSocket(session, '/bad-accept', KEY);
    assert.equal(bad.status, 502);
  });

  it('holds a kind: concurrency lease for as long as the HTTP/2 tunnel is open', async () => {
    const first = await openHttp2WebSocket(session, '/capped/a', KEY);
    assert.equal(first.status, 200);
    const second = await openHttp2WebSocket(session, '/capped/b', KEY);
    assert.equal(second.status, 429, 'one tunnel open: the second is refused');
    first.stream.end();
    await first.closed;
    // The lease goes back when the gateway's side of the stream closes, which the client may see first: ask until admitted.
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20));
      const next = await openHttp2WebSocket(session, '/capped/c', KEY);
      status = next.status;
      if (status === 200) next.stream.end();
    }
    assert.equal(status, 200, 'the closed tunnel gave its lease back');
  });

  it('answers 501 to a CONNECT for another protocol, the session still serving', async () => {
    assert.equal((await openHttp2WebSocket(session, '/live/x', { ...KEY, ':protocol': 'something-else' })).status, 501);
    assert.equal(session.destroyed, false);
  });
});

describe('WebSocket over HTTP/2: tunnels end', () => {
  it('with NO_ERROR when idle past limits.websocketIdleTimeoutMs, and on drain (GOAWAY; close() does not wait out its grace)', async () => {
    const certs = makeCertificates();
    const upstream = await startEcho();
    const gateway = await startGateway(yaml(certs), { UP: upstream.url, IDLE: '300' }, { shutdownGraceMs: 60_000 });
    const session = connectHttp2(gateway.url, { ca: readFileSync(certs.ca) });
    try {
      const idle = await openHttp2WebSocket(session, '/live/idle', KEY);
      assert.equal(idle.status, 200);
      assert.deepEqual(await idle.closed, { rstCode: 0, error: false }, 'nothing sent: the gateway closed the tunnel by itself');
      const busy = await openHttp2WebSocket(session, '/live/busy', KEY);
      busy.send('still here');
      assert.equal(String((await busy.next()).data), 'still here');
      const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
      const sessionClosed = new Promise<void>((resolve) => session.once('close', () => resolve()));
      const started = Date.now();
      const closing = gateway.close(); // a grace of 60 s: waiting it out would show
      await goaway;
      assert.deepEqual(await busy.closed, { rstCode: 0, error: false }, 'the drain closed the tunnel cleanly');
      await sessionClosed;
      await closing;
      assert.ok(Date.now() - started < 30_000, 'the drain ended the tunnel instead of waiting for the grace period');
    } finally {
      session.destroy();
      await gateway.close();
      await upstream.close();
      certs.remove();
    }
  });
});
