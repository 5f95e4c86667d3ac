// Issue 37, item 2: request smuggling through a WebSocket upgrade. An upgrade
// request's body never followed it upstream while its Content-Length did, and
// the upstream connection was then reused: an upstream that ignores Upgrade
// read the body (or the next upgrade) as a request of its own. Now an upgrade
// with a body is refused with 400, and every upgrade attempt goes upstream on
// a connection of its own that is closed after a non-101 answer. The upstream
// here is a raw socket server that records every byte it receives.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { rawClient, statusOf } from './raw-client.js';
import { startGateway } from '../helpers/gateway-support.js';

const KEY = 'upgrade-smuggle-key-1';
const SMUGGLED = 'POST /internal/admin/delete-everything HTTP/1.1\r\nHost: upstream\r\nContent-Length: 0\r\n\r\n';

/** Answers every request head it reads with a keep-alive 200 (it ignores Upgrade), recording bytes and connections. */
function ignoringUpstream(): Promise<{ url: string; bytes: () => string; connections: () => number; close(): Promise<void> }> {
  let bytes = '';
  let connections = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    let pending = '';
    socket.on('data', (chunk) => {
      bytes += chunk.toString('latin1');
      pending += chunk.toString('latin1');
      let end = pending.indexOf('\r\n\r\n');
      while (end !== -1) {
        pending = pending.slice(end + 4);
        socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
        end = pending.indexOf('\r\n\r\n');
      }
    });
    socket.on('error', () => {});
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        bytes: () => bytes,
        connections: () => connections,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

const upgradeHead = (host: string, extra = '') =>
  `GET /ws HTTP/1.1\r\nHost: ${host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nX-Api-Key: ${KEY}\r\n${extra}\r\n`;

describe('hardening: WebSocket upgrades', () => {
  let upstream: Awaited<ReturnType<typeof ignoringUpstream>>;
  let gateway: RunningSluice;
  let host: string;

  before(async () => {
    upstream = await ignoringUpstream();
    gateway = await startGateway(`routes: [{ id: ws, path: /ws, upstream: '\${UP}' }]\ntenants: { keys: [{ key: ${KEY}, tenant: shop-a }] }\n`, { UP: upstream.url });
    host = new URL(gateway.url).host;
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('refuses an upgrade with a body (Content-Length or Transfer-Encoding) with 400; its body never reaches the upstream', async () => {
    const withLength = await rawClient(gateway.url, `${upgradeHead(host, `Content-Length: ${SMUGGLED.length}\r\n`)}${SMUGGLED}`);
    await withLength.closed;
    assert.equal(statusOf(withLength.received()), 400, withLength.received());
    assert.match(withLength.received(), /"error":"upgrade_with_body"/);
    const chunked = await rawClient(gateway.url, `${upgradeHead(host, 'Transfer-Encoding: chunked\r\n')}${SMUGGLED.length.toString(16)}\r\n${SMUGGLED}\r\n0\r\n\r\n`);
    await chunked.closed;
    assert.equal(statusOf(chunked.received()), 400, chunked.received());
    // A body-less upgrade after them: the upstream sees it, and never the smuggled request.
    const plain = await rawClient(gateway.url, upgradeHead(host));
    await plain.closed;
    assert.equal(statusOf(plain.received()), 200, plain.received());
    assert.doesNotMatch(upstream.bytes(), /delete-everything/);
  });

  it('never reuses an upstream connection that carried an upgrade attempt', async () => {
    const before = upstream.connections();
    for (let i = 0; i < 3; i++) {
      const client = await rawClient(gateway.url, upgradeHead(host));
      await client.closed;
      assert.equal(statusOf(client.received()), 200, client.received());
    }
    assert.equal(upstream.connections() - before, 3, 'one upstream connection per upgrade attempt');
  });
});
