// HTTP/2 bounds per connection, through the TLS listener: the
// SETTINGS_MAX_CONCURRENT_STREAMS it announces (128 by default), GOAWAY for a
// client resetting streams too fast, and the header/keep-alive deadlines for a
// session that opens no stream or never finishes a header block.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type ClientHttp2Session, constants } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { RunningSluice } from '../../src/app.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { until } from '../helpers/poll.js';
import { h2Get, h2Session } from './h2-support.js';
import { startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const GET = { ':path': '/api/x', 'x-api-key': 'h2-key-1' };

function remoteSettings(session: ClientHttp2Session): Promise<ClientHttp2Session['remoteSettings']> {
  return new Promise((resolve) => session.once('remoteSettings', resolve));
}

describe('HTTP/2 connection limits', () => {
  let certs: TestCertificates;
  let upstream: TestUpstream;
  const gateways: RunningSluice[] = [];
  const start = async (limits: string) => {
    const gateway = await startGateway(`
tls: { cert: ${certs.serverCert}, key: ${certs.serverKey}, http2: true }
limits: { ${limits} }
routes:
  - { id: api, path: '/api/*', upstream: '\${UP}', limits: [{ id: api-rate, key: tenant, rule: { policy: token_bucket, capacity: 1000000, refillPerSecond: 1000000 } }] }
tenants: { keys: [{ key: h2-key-1, tenant: shop-a }] }
`, { UP: upstream.url });
    gateways.push(gateway);
    return gateway;
  };

  before(async () => {
    certs = makeCertificates();
    upstream = await startUpstream();
  });
  after(async () => {
    await Promise.all(gateways.map((gateway) => gateway.close()));

    await upstream.close();
    certs.remove();
  });

  it('announces SETTINGS_MAX_CONCURRENT_STREAMS: 128 by default, the configured value otherwise', async () => {
    for (const [limits, expected] of [['', 128], ['http2MaxConcurrentStreams: 4', 4]] as const) {
      const gateway = await start(limits);
      const session = h2Session(gateway.url, certs);
      assert.equal((await remoteSettings(session)).maxConcurrentStreams, expected);
      session.close();
    }
  });

  it('a connection resetting streams faster than the bound gets GOAWAY ENHANCE_YOUR_CALM and is closed', async () => {
    // The address's cool-down off (h2-rapid-reset.int.test.ts tests it): another connection of this client is served at once.
    const gateway = await start('http2MaxResetsPerSecond: 20, http2ResetCooldownMs: 0');
    const session = h2Session(gateway.url, certs);
    let goaway: number | undefined;
    session.on('goaway', (code: number) => {
      goaway = code;
    });
    await remoteSettings(session);
    for (let i = 0; i < 100 && !session.closed && !session.destroyed; i++) {
      try {
        session.request(GET, { endStream: true }).on('error', () => {}).close(constants.NGHTTP2_CANCEL);
      } catch {
        break;
      }
    }
    await until(() => session.destroyed || session.closed, 'the gateway closing the session');
    session.destroy();
    assert.equal(goaway, constants.NGHTTP2_ENHANCE_YOUR_CALM);
    // A well-behaved client on another connection is still served.
    const other = h2Session(gateway.url, certs);
    assert.equal((await h2Get(other, GET).answer).status, 200);
    other.close();
  });

  it('a session that opens no stream is closed after the header deadline', async () => {
    const gateway = await start('headerTimeoutMs: 300, requestTimeoutMs: 1000');
    const session = h2Session(gateway.url, certs);
    await remoteSettings(session);
    await until(() => session.destroyed || session.closed, 'the idle session closed', 15_000);
    session.destroy();
  });

  for (const [http2, hello] of [[true, ''], [false, ''], [false, 'GET / HTTP/1.1\r\nhost: x\r\n\r\n']] as const) {
    const what = hello === '' ? 'a TLS handshake that never starts' : 'plain HTTP sent to the TLS port';
    it(`${what} is cut after the header deadline, not node's 120 s (http2: ${http2})`, async () => {
      const gateway = await startGateway(`
tls: { cert: ${certs.serverCert}, key: ${certs.serverKey}, http2: ${http2} }
limits: { headerTimeoutMs: 300, requestTimeoutMs: 1000 }
routes: [{ id: api, path: '/api/*', upstream: '\${UP}' }]
`, { UP: upstream.url });
      gateways.push(gateway);
      const { port } = new URL(gateway.url);
      const socket = netConnect(Number(port), '127.0.0.1');
      let closed = false;
      socket.on('error', () => {});
      socket.once('close', () => (closed = true));
      if (hello !== '') socket.write(hello);
      try {
        await until(() => closed, 'the silent connection closed', 15_000);
      } finally {
        socket.destroy();
      }
    });
  }

  it('a header block that never ends (HEADERS without END_HEADERS) is cut after the header deadline', async () => {
    const gateway = await start('headerTimeoutMs: 300, requestTimeoutMs: 1000');
    const port = Number(new URL(gateway.url).port);
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: readFileSync(certs.ca), ALPNProtocols: ['h2'], servername: 'localhost' });
    socket.on('error', () => {});
    let closed = false;
    socket.on('close', () => {
      closed = true;
    });
    socket.resume();
    await new Promise((go) => socket.once('secureConnect', go));
    assert.equal(socket.alpnProtocol, 'h2');
    const frame = (type: number, flags: number, stream: number, payload: Buffer) => {
      const head = Buffer.alloc(9);
      head.writeUIntBE(payload.length, 0, 3);
      head.writeUInt8(type, 3);
      head.writeUInt8(flags, 4);
      head.writeUInt32BE(stream, 5);
      return Buffer.concat([head, payload]);
    };
    socket.write(Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'));
    socket.write(frame(0x4, 0, 0, Buffer.alloc(0))); // SETTINGS
    // HEADERS on stream 1 with END_STREAM but not END_HEADERS: :method GET, :scheme https, :path / (static HPACK indexes); no CONTINUATION follows.
    socket.write(frame(0x1, 0x1, 1, Buffer.from([0x82, 0x87, 0x84])));
    await until(() => closed, 'the connection with an unfinished header block closed', 15_000);
    socket.destroy();
  });

  it('an HTTPS/1.1 header drip on the HTTP/2 listener gets 408 near the header deadline, not node\'s 30 s check', async () => {
    const gateway = await start('headerTimeoutMs: 1000, requestTimeoutMs: 2000');
    const port = Number(new URL(gateway.url).port);
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: readFileSync(certs.ca), ALPNProtocols: ['http/1.1'], servername: 'localhost' });
    socket.on('error', () => {});
    let answer = '';
    let closed = false;
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString('latin1');
    });
    socket.on('close', () => {
      closed = true;
    });
    await new Promise((go) => socket.once('secureConnect', go));
    socket.write('GET /api/x HTTP/1.1\r\nHost: localhost\r\n');
    const drip = setInterval(() => socket.write('X-Drip: a\r\n'), 200);
    try {
      // Generous against the 1 s deadline, well under the 30 s node checks at by default.
      await until(() => closed, 'the dripping connection closed', 12_000);
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
    assert.match(answer, /^HTTP\/1\.1 408 /);
  });

  it('a bad value names its field', () => {
    for (const field of ['http2MaxConcurrentStreams', 'http2MaxResetsPerSecond']) {
      assert.throws(
        () => parseConfig(`limits: { ${field}: 0 }\nroutes: [{ id: a, path: /a, upstream: 'http://127.0.0.1:1' }]\n`, { source: 'test.yaml', env: {} }),
        (error: Error) => error.message.includes(`limits.${field}`) && error.message.includes('at least 1'),
      );
    }
  });
});
