// The gateway over HTTPS (issue 21): the design's curl loop gives 200 200 429
// over TLS, a second certificate is served by SNI, TLS 1.1 is refused, a
// reload swaps renewed certificates without dropping an open connection, the
// optional plain listener redirects to HTTPS, the admin API serves HTTPS too,
// and a missing or mismatched file is a config error naming the field.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, type PeerCertificate } from 'node:tls';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import type { RunningSluice } from '../../src/app.js';
import { ConfigError, parseConfig } from '../../src/config/index.js';
import { freePort } from '../helpers/ports.js';
import { namedCertificate } from '../helpers/named-cert.js';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { startGateway, startUpstream, type TestUpstream } from './support.js';

const run = promisify(execFile);
const KEY = 'https-test-key-1';

/** The certificate a handshake for `servername` gets, and whether the CA vouched for it. */
function handshake(port: number, servername: string, ca: string, extra: { maxVersion?: 'TLSv1.1' } = {}): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername, ca: readFileSync(ca), ...extra }, () => {
      const cert = socket.getPeerCertificate();
      socket.end();
      resolve(cert);
    });
    socket.once('error', reject);
  });
}

describe('the gateway over HTTPS', () => {
  let certs: TestCertificates;
  let live: { cert: string; key: string };
  let dir: string;
  let upstream: TestUpstream;
  let gateway: RunningSluice;
  let yaml: string;
  let redirectPort: number;

  before(async () => {
    certs = makeCertificates();
    dir = mkdtempSync(join(tmpdir(), 'sluice-https-'));
    // The files the config names; a test renews them in place.
    live = { cert: join(dir, 'live.pem'), key: join(dir, 'live.key') };
    copyFileSync(certs.serverCert, live.cert);
    copyFileSync(certs.serverKey, live.key);
    const api = namedCertificate(certs, 'api', ['api.sluice.test', '*.tenants.sluice.test']);
    upstream = await startUpstream();
    redirectPort = await freePort();
    yaml = `
tls:
  cert: ${live.cert}
  key: ${live.key}
  sni: [{ names: [api.sluice.test, '*.tenants.sluice.test'], cert: ${api.cert}, key: ${api.key} }]
  redirectHttp: 127.0.0.1:${redirectPort}
admin: { listen: '127.0.0.1:0', token: https-admin-token-0123456789, tls: { cert: ${certs.serverCert}, key: ${certs.serverKey} } }
dataDir: ${join(dir, 'data')}
routes:
  - { id: create-order, methods: [POST], path: /orders, upstream: '\${UP}' }
tenants: { keys: [{ key: ${KEY}, tenant: shop-a }] }
rules: [{ tenant: shop-a, route: create-order, policy: token_bucket, capacity: 2, refillPerSecond: 0.01 }]
`;
    gateway = await startGateway(yaml, { UP: upstream.url }, { admin: true, ruleStore: true });
  });
  after(async () => {
    await gateway?.close();
    await upstream?.close();
    certs?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("answers the design's curl loop over HTTPS: 200 200 429", async () => {
    assert.match(gateway.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { stdout } = await run('curl', ['-s', '--http1.1', '--cacert', certs.ca, '-o', '/dev/null', '-w', '%{http_code}', '-H', `X-Api-Key: ${KEY}`, '-X', 'POST', `${gateway.url}/orders`]);
      codes.push(stdout);
    }
    assert.deepEqual(codes, ['200', '200', '429']);
  });

  it('serves the default certificate, and another one by SNI (exact and wildcard names)', async () => {
    const port = Number(new URL(gateway.url).port);
    assert.equal((await handshake(port, 'localhost', certs.ca)).subject.CN, 'server');
    assert.equal((await handshake(port, 'api.sluice.test', certs.ca)).subject.CN, 'api.sluice.test');
    assert.equal((await handshake(port, 'shop.tenants.sluice.test', certs.ca)).subject.CN, 'api.sluice.test');
  });

  it('refuses TLS 1.1', async () => {
    const port = Number(new URL(gateway.url).port);
    await assert.rejects(handshake(port, 'localhost', certs.ca, { maxVersion: 'TLSv1.1' }));
  });

  it('a reload serves renewed certificates to new connections and keeps the open one', async () => {
    const port = Number(new URL(gateway.url).port);
    const before = (await handshake(port, 'localhost', certs.ca)).serialNumber;
    const agent = new Agent({ connect: { ca: readFileSync(certs.ca) }, connections: 1 });
    try {
      const first = await request(`${gateway.url}/nowhere`, { dispatcher: agent, headers: { 'x-api-key': KEY } });
      await first.body.text();
      const renewed = namedCertificate(certs, 'renewed', ['localhost']);
      copyFileSync(renewed.cert, live.cert);
      copyFileSync(renewed.key, live.key);
      gateway.reconfigure(parseConfig(yaml, { env: { UP: upstream.url } }));
      const after = await handshake(port, 'localhost', certs.ca);
      assert.notEqual(after.serialNumber, before, 'new handshakes get the renewed certificate');
      assert.equal(after.subject.CN, 'localhost');
      const again = await request(`${gateway.url}/nowhere`, { dispatcher: agent, headers: { 'x-api-key': KEY } });
      await again.body.text();
      assert.equal(again.statusCode, 404, 'the open connection still serves');
    } finally {
      await agent.close();
    }
  });

  it('the plain listener redirects every request to HTTPS, keeping the path and query', async () => {
    const reply = await new Promise<{ status: number; location: string | undefined }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: redirectPort, path: '/orders?x=1', method: 'POST', headers: { host: `shop.example:${redirectPort}` } }, (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0, location: res.headers.location });
      });
      req.on('error', reject);
      req.end();
    });
    assert.deepEqual(reply, { status: 308, location: `https://shop.example:${new URL(gateway.url).port}/orders?x=1` });
  });

  it('serves the admin API over HTTPS', async () => {
    assert.match(gateway.adminUrl ?? '', /^https:/);
    const agent = new Agent({ connect: { ca: readFileSync(certs.ca) } });
    try {
      const res = await request(`${gateway.adminUrl}/healthz`, { dispatcher: agent });
      await res.body.text();
      assert.equal(res.statusCode, 200);
    } finally {
      await agent.close();
    }
  });
});

describe('TLS config errors', () => {
  let certs: TestCertificates;
  before(() => {
    certs = makeCertificates();
  });
  after(() => certs.remove());
  const config = (tls: string, env: Record<string, string> = {}) => () => parseConfig(`${tls}\nroutes: [{ id: r, path: /*, upstream: 'http://127.0.0.1:1' }]\n`, { source: 'tls.yaml', env });

  it('names the field of a missing file, of a key that is not the certificate’s, and the variable that set it', () => {
    assert.throws(config(`tls: { cert: /nonexistent/cert.pem, key: ${certs.serverKey} }`), (error: unknown) => error instanceof ConfigError && /^tls\.yaml:1: tls\.cert: cannot read \/nonexistent\/cert\.pem: ENOENT$/.test(error.message));
    assert.throws(config(`tls: { cert: ${certs.serverCert}, key: ${certs.clientKey} }`), (error: unknown) => error instanceof ConfigError && error.message.includes('tls.key: ') && error.message.includes('no usable certificate and key'));
    assert.throws(config(`admin: { tls: { cert: ${certs.serverCert}, key: /nope.key } }`), (error: unknown) => error instanceof ConfigError && error.message.includes('admin.tls.key: cannot read /nope.key'));
    assert.throws(config('', { SLUICE_TLS_CERT: '/missing.pem', SLUICE_TLS_KEY: certs.serverKey }), (error: unknown) => error instanceof ConfigError && error.message.startsWith('SLUICE_TLS_CERT: tls.cert: cannot read /missing.pem'));
  });
});
