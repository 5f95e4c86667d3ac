// `kind: concurrency` on WebSocket tunnels, with the `ws` package as client and
// upstream and a real redis-server: N tunnels of one key open, the N+1th
// upgrade gets 429 before any upstream connection; an in-process gateway and
// a `sluice start` child share the cap through Redis, their leases renewed
// while the tunnels stay open; the child SIGKILLed, its lease expires after
// the TTL and frees the slot.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { WebSocket, WebSocketServer } from 'ws';
import type { RunningSluice } from '../../src/app.js';
import { slotKey } from '../../src/core/ids.js';
import { freePort } from '../helpers/ports.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { SluiceProcess } from '../helpers/sluice-process.js';
import { until } from '../helpers/poll.js';
import { startGateway } from '../helpers/gateway-support.js';

const KEY = { 'x-api-key': 'ws-cc-key-1' };
const TTL_MS = 3000;

/** Opens a client; resolves with it once open, or with the status and body the gateway answered instead. */
function connectWs(url: string): Promise<{ ws?: WebSocket; status?: number; body?: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: KEY });
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    ws.once('error', reject);
  });
}

const closeWs = (ws: WebSocket) =>
  new Promise<void>((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) return resolve();
    ws.once('close', () => resolve());
    ws.close();
  });

const yaml = (upstream: string, redis: string) => `
routes:
  - id: feed
    path: /feed
    upstream: '${upstream}'
    limits: [{ id: feed-tunnels, kind: concurrency, key: tenant, max: 2, leaseTtlMs: ${TTL_MS} }]
tenants: { keys: [{ key: ws-cc-key-1, tenant: shop-a }] }
store: { type: redis, url: '${redis}', deadlineMs: 2000 }
`;

describe('concurrency limit on WebSocket tunnels, shared through Redis', () => {
  let redis: RedisServer;
  let upstream: Server;
  let wss: WebSocketServer;
  let upgrades = 0;
  let upstreamUrl: string;
  let gateway: RunningSluice;

  before(async () => {
    redis = await startRedis();
    upstream = createServer((_req, res) => res.end('plain'));
    wss = new WebSocketServer({ noServer: true });
    upstream.on('upgrade', (req, socket, head) => {
      upgrades++;
      wss.handleUpgrade(req, socket, head, (ws) => ws.on('message', (data) => ws.send(data)));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', () => resolve()));
    upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    gateway = await startGateway(yaml(upstreamUrl, redis.url));
  });
  after(async () => {
    await gateway.close();
    for (const client of wss.clients) client.terminate();
    await new Promise<void>((resolve) => {
      upstream.close(() => resolve());
      upstream.closeAllConnections();
    });
    await redis.stop();
  });

  it('N tunnels open: the N+1th upgrade gets 429 before any upstream connection; a closed tunnel frees its slot', async () => {
    const url = `${gateway.url.replace(/^http/, 'ws')}/feed`;
    const open = [await connectWs(url), await connectWs(url)];
    assert.ok(open[0]!.ws && open[1]!.ws);
    const seen = upgrades;
    const refused = await connectWs(url);
    assert.equal(refused.status, 429);
    assert.equal(JSON.parse(refused.body!).limit, 'feed-tunnels');
    assert.equal(upgrades, seen, 'the refused upgrade never reached the upstream');
    await closeWs(open[0]!.ws!);
    await until(async () => {
      const reply = await connectWs(url);
      if (reply.ws) open.push(reply);
      return reply.ws !== undefined;
    }, 'a tunnel admitted after one closed');
    assert.equal(open.length, 3);
    await Promise.all(open.slice(1).map((reply) => closeWs(reply.ws!)));
  });

  it('the drain ends the tunnels and gives their leases back to Redis', async () => {
    const draining = await startGateway(yaml(upstreamUrl, redis.url));
    const tunnel = await connectWs(`${draining.url.replace(/^http/, 'ws')}/feed`);
    assert.ok(tunnel.ws);
    const check = redis.client();
    try {
      const key = slotKey('shop-a', 'feed-tunnels');
      assert.equal(await check.zcard(key), 1);
      await draining.close();
      assert.equal(await check.zcard(key), 0, 'no lease left to wait out its TTL');
    } finally {
      check.disconnect();
    }
  });

  it('two gateways share the cap; leases are renewed while tunnels stay open; a SIGKILLed instance frees its lease after the TTL', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cc-'));
    const file = join(dir, 'sluice.yaml');
    const [port, adminPort] = [await freePort(), await freePort()];
    writeFileSync(file, `${yaml(upstreamUrl, redis.url)}dataDir: '${dir}'\nadmin: { listen: '127.0.0.1:${adminPort}' }\n`);
    const child = new SluiceProcess(file, `http://127.0.0.1:${adminPort}`, [], { SLUICE_LISTEN: `127.0.0.1:${port}` });
    try {
      await child.logged('sluice gateway listening');
      const viaA = `${gateway.url.replace(/^http/, 'ws')}/feed`;
      const viaB = `ws://127.0.0.1:${port}/feed`;
      const a = await connectWs(viaA);
      const b = await connectWs(viaB);
      assert.ok(a.ws && b.ws, `statuses ${a.status} ${b.status}`);
      assert.equal((await connectWs(viaA)).status, 429, 'the cap counts the tunnel through the other gateway');
      assert.equal((await connectWs(viaB)).status, 429);
      await sleep(TTL_MS + 1000); // longer than a lease lives unrenewed
      assert.equal((await connectWs(viaA)).status, 429, 'both leases were renewed while their tunnels stayed open');
      child.kill();
      await child.exited;
      assert.equal((await connectWs(viaA)).status, 429, "the dead instance's lease holds until it expires");
      let admitted: WebSocket | undefined;
      await until(async () => {
        admitted = (await connectWs(viaA)).ws;
        return admitted !== undefined;
      }, "the dead instance's lease expired");
      await Promise.all([closeWs(a.ws), closeWs(admitted!)]);
    } finally {
      child.kill();
    }
    for (const client of wss.clients) client.terminate();
  });
});
