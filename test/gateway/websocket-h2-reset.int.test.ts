// An HTTP/2 WebSocket stream (RFC 8441) that the client resets while the
// upstream is still answering the gateway's handshake: the upstream's 101 must
// not be joined to the dead stream. An HTTP/2 response has no `destroyed`
// property, so the gateway's old check never saw the reset: it joined the
// dead stream, counted a tunnel opened and left it in the open-tunnels gauge
// (the stream's 'close' had come and gone, so the tunnel's end never ran).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { constants } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { until } from '../helpers/poll.js';
import { h2Session } from './h2-support.js';
import { startGateway } from '../helpers/gateway-support.js';

const yaml = (certs: TestCertificates) => `
tls: { cert: ${certs.serverCert}, key: ${certs.serverKey} }
routes:
  - { id: late-ws, path: /late/*, upstream: '\${UP}' }
tenants: { keys: [{ key: h2ws-reset-key-1, tenant: shop-a }] }
limits: { websocketIdleTimeoutMs: 300000 }
`;
const metric = async (pattern: RegExp) => pattern.exec(await resilienceRegistry.metrics())?.[1] ?? '0';

describe('WebSocket over HTTP/2: a stream reset during the upstream handshake', () => {
  let certs: TestCertificates;
  let upstream: Server;
  let gateway: RunningSluice;
  /** The upgrade the upstream holds: its socket, and the 101 it sends when the test says so. */
  let held: { socket: Socket; answer(): void } | undefined;
  let upstreamSocketClosed = false;

  before(async () => {
    certs = makeCertificates();
    upstream = createServer((_req, res) => res.writeHead(400).end());
    upstream.on('upgrade', (req, socket: Socket) => {
      const accept = createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
      // The gateway's side ended or closed (node's server is half-open: an end alone brings no 'close').
      for (const event of ['end', 'close']) socket.once(event, () => (upstreamSocketClosed = true));
      held = { socket, answer: () => socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`) };
    });
    await new Promise<void>((go) => upstream.listen(0, '127.0.0.1', go));
    gateway = await startGateway(yaml(certs), { UP: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` });
  });
  after(async () => {
    await gateway.close();
    held?.socket.destroy(); // an upgraded socket is the test's, not the server's: closeAllConnections leaves it
    upstream.closeAllConnections();
    await new Promise((go) => upstream.close(go));
    certs.remove();
  });

  it('releases the upstream socket and opens no tunnel', async () => {
    const opened = await metric(/sluice_websocket_tunnels_total\{route="late-ws",outcome="opened"\} (\d+)/);
    const session = h2Session(gateway.url, certs);
    const stream = session.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'https', ':path': '/late/feed', 'sec-websocket-version': '13', 'x-api-key': 'h2ws-reset-key-1' });
    stream.on('error', () => {});
    await until(() => held !== undefined, 'the upgrade reaching the upstream');
    stream.close(constants.NGHTTP2_CANCEL);
    await sleep(100); // the RST_STREAM reaches the gateway before the upstream answers
    held!.answer();
    await until(() => upstreamSocketClosed, 'the gateway closing the upstream socket of the reset stream', 3_000);
    assert.equal(await metric(/sluice_websocket_tunnels_total\{route="late-ws",outcome="opened"\} (\d+)/), opened, 'no tunnel was opened');
    assert.equal(await metric(/sluice_websocket_tunnels_open\{route="late-ws"\} (\d+)/), '0');
    session.close();
  });
});
