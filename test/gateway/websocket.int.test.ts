// WebSocket through the gateway (issue 21), with the `ws` package as client
// and upstream: the upgrade is one request for the limits (refused → 429
// before any upstream connection), frames go both ways untouched, the tunnel
// counts in /metrics, closes when idle past its timeout and when the gateway
// drains, and an upstream that refuses the upgrade has its answer relayed.
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import type { RunningSluice } from '../../src/app.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import { startGateway } from '../helpers/gateway-support.js';
import { type EchoUpstream, startEcho } from '../helpers/ws-echo.js';

/** Opens a client; resolves with it once open, or with the HTTP status the gateway answered instead. */
function connectWs(url: string, headers: Record<string, string> = {}): Promise<{ ws?: WebSocket; status?: number; headers?: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    let upgraded: IncomingHttpHeaders | undefined;
    ws.once('upgrade', (res) => {
      upgraded = res.headers;
    });
    ws.once('open', () => resolve({ ws, headers: upgraded }));
    ws.once('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ status: res.statusCode, headers: res.headers });
    });
    ws.once('error', reject);
  });
}

const echoOnce = (ws: WebSocket, data: string | Buffer) =>
  new Promise<{ data: Buffer; binary: boolean }>((resolve) => {
    ws.once('message', (reply, binary) => resolve({ data: reply as Buffer, binary }));
    ws.send(data);
  });

const closed = (ws: WebSocket) => new Promise<number>((resolve) => (ws.readyState === WebSocket.CLOSED ? resolve(0) : ws.once('close', (code) => resolve(code))));

const YAML = `
routes:
  - id: live
    path: /live/*
    upstream: '\${UP}'
    stripPrefix: true
    limits: [{ id: live-upgrades, key: tenant, rule: { policy: token_bucket, capacity: 3, refillPerSecond: 0.001 } }]
  - { id: refuse, path: /refuse, upstream: '\${UP}' }
tenants: { keys: [{ key: ws-test-key-1, tenant: shop-a }] }
limits:
  websocketIdleTimeoutMs: \${IDLE:-300000}
`;
const KEY = { 'x-api-key': 'ws-test-key-1' };

describe('WebSocket through the gateway', () => {
  let upstream: EchoUpstream;
  let gateway: RunningSluice;
  let wsUrl: string;

  before(async () => {
    upstream = await startEcho();
    gateway = await startGateway(YAML, { UP: upstream.url });
    wsUrl = gateway.url.replace(/^http/, 'ws');
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('carries text and binary frames both ways, with the rate-limit headers on the 101', async () => {
    const opened = await connectWs(`${wsUrl}/live/feed?x=1`, KEY);
    assert.ok(opened.ws, `status ${opened.status}`);
    const ws = opened.ws;
    assert.equal(opened.headers?.['x-ratelimit-limit'], '3');
    assert.equal(opened.headers?.['x-ratelimit-remaining'], '2');
    assert.deepEqual(await echoOnce(ws, 'hello'), { data: Buffer.from('hello'), binary: false });
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    assert.deepEqual(await echoOnce(ws, bytes), { data: bytes, binary: true });
    const seen = upstream.upgrades.at(-1)!;
    assert.equal(seen.path, '/feed?x=1', 'the route rewrote the path');
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
    assert.match(await resilienceRegistry.metrics(), /sluice_websocket_tunnels_open\{route="live"\} 1/);
    ws.close(1000);
    assert.equal(await closed(ws), 1000);
  });

  it('counts the upgrade as a request: past the limit it is refused 429 before any upstream connection', async () => {
    const before = upstream.upgrades.length;
    const second = await connectWs(`${wsUrl}/live/a`, KEY);
    const third = await connectWs(`${wsUrl}/live/b`, KEY);
    const fourth = await connectWs(`${wsUrl}/live/c`, KEY);
    assert.ok(second.ws && third.ws);
    assert.equal(fourth.status, 429);
    assert.ok(fourth.headers?.['retry-after'], 'the 429 carries Retry-After');
    assert.equal(upstream.upgrades.length, before + 2, 'the refused upgrade never reached the upstream');
    const noKey = await connectWs(`${wsUrl}/live/d`);
    assert.equal(noKey.status, 401);
    second.ws?.close();
    third.ws?.close();
    await Promise.all([closed(second.ws!), closed(third.ws!)]);
  });

  it("relays the upstream's answer when it refuses the upgrade", async () => {
    const refused = await connectWs(`${wsUrl}/refuse`, KEY);
    assert.equal(refused.status, 403);
  });
});

describe('WebSocket tunnels end', () => {
  it('when idle past limits.websocketIdleTimeoutMs, and on drain (close() does not wait out its grace)', async () => {
    const upstream = await startEcho();
    const gateway = await startGateway(YAML, { UP: upstream.url, IDLE: '300' }, { shutdownGraceMs: 60_000 });
    const wsUrl = gateway.url.replace(/^http/, 'ws');
    try {
      const idle = await connectWs(`${wsUrl}/live/idle`, KEY);
      assert.ok(idle.ws);
      await closed(idle.ws); // nothing sent: the gateway closes the tunnel by itself
      const busy = await connectWs(`${wsUrl}/live/busy`, KEY);
      assert.ok(busy.ws);
      await echoOnce(busy.ws, 'still here');
      const started = Date.now();
      const closing = gateway.close(); // a grace of 60 s: waiting it out would show
      await closed(busy.ws);
      await closing;
      assert.ok(Date.now() - started < 30_000, 'the drain ended the tunnel instead of waiting for the grace period');
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });
});
