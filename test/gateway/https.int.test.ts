// The gateway over HTTPS (issue 21): the design's curl loop gives 200 200 429
// over TLS, a second certificate is served by SNI, TLS 1.1 is refused, a
// reload swaps renewed certificates without dropping an open connection, the
// optional plain listener redirects to HTTPS, the admin API serves HTTPS too,
// and a missing or mismatched file is a config error naming the field.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { type ClientHttp2Session, connect as connectHttp2, type OutgoingHttpHeaders } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect, type PeerCertificate } from 'node:tls';
import { promisify } from 'node:util';
import { Agent, request } from 'undici';
import type { RunningSluice } from '../../src/app.js';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { freePort } from '../helpers/ports.js';
import { namedCertificate } from '../helpers/named-cert.js';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const run = promisify(execFile);
const KEY = 'https-test-key-1';
const KEY_B = 'https-test-key-2';
const KEY_C = 'https-test-key-3';
const KEY_D = 'https-test-key-4';

/** One HTTP/2 stream: its status, response headers and body. A CONNECT stream is left open for the server to end. */
function h2Ask(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body?: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request(headers);
    let text = '';
    let answered: Record<string, unknown> = {};
    stream.on('response', (h) => {
      answered = h;
    });
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      text += chunk;
    });
    stream.on('end', () => resolve({ status: Number(answered[':status']), headers: answered, body: text }));
    stream.on('error', reject);
    if (headers[':method'] !== 'CONNECT') stream.end(body);
  });
}

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
tenants: { keys: [{ key: ${KEY}, tenant: shop-a }, { key: ${KEY_B}, tenant: shop-b }, { key: ${KEY_C}, tenant: shop-c }, { key: ${KEY_D}, tenant: shop-d }] }
rules: [{ tenant: '*', route: create-order, policy: token_bucket, capacity: 2, refillPerSecond: 0.01 }]
`;
    gateway = await startGateway(yaml, { UP: upstream.url }, { admin: true, ruleStore: true });
  });
  after(async () => {
    await gateway?.close();
    await upstream?.close();
    certs?.remove();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  // Each loop on a tenant of its own, so that each starts from a full bucket.
  const curlLoop = async (protocol: '--http1.1' | '--http2', key: string) => {
    const codes: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { stdout } = await run('curl', ['-s', protocol, '--cacert', certs.ca, '-o', '/dev/null', '-w', '%{http_version} %{http_code}', '-H', `X-Api-Key: ${key}`, '-X', 'POST', `${gateway.url}/orders`]);
      codes.push(stdout);
    }
    return codes;
  };

  it("answers the design's curl loop over HTTPS, HTTP/1.1 and HTTP/2 on one port: 200 200 429", async () => {
    assert.match(gateway.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(await curlLoop('--http1.1', KEY), ['1.1 200', '1.1 200', '1.1 429']);
    assert.deepEqual(await curlLoop('--http2', KEY_B), ['2 200', '2 200', '2 429']);
  });

  it("node's http2 client gets the same answers and headers, the upstream the same request", async () => {
    const session = connectHttp2(gateway.url, { ca: readFileSync(certs.ca) });
    try {
      const ask = (path: string) =>
        h2Ask(session, { ':method': 'POST', ':path': path, 'x-api-key': KEY_C, 'content-type': 'application/json' }, '{"n":1}');
      const replies = await Promise.all([ask('/orders'), ask('/orders'), ask('/orders')]);
      assert.deepEqual(replies.map((reply) => reply.status).sort(), [200, 200, 429], 'three streams on one connection');
      const ok = replies.find((reply) => reply.status === 200)!;
      assert.equal(ok.headers['x-ratelimit-limit'], '2');
      assert.deepEqual(JSON.parse(ok.body), { path: '/orders', method: 'POST' });
      const refused = replies.find((reply) => reply.status === 429)!;
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal((await ask('/nowhere')).status, 404);
    } finally {
      session.close();
    }
  });

  it('serves the default certificate, and another one by SNI (exact and wildcard names)', async () => {
    const port = Number(new URL(gateway.url).port);
    assert.equal((await handshake(port, 'localhost', certs.ca)).subject.CN, 'server');
    assert.equal((await handshake(port, 'api.sluice.test', certs.ca)).subject.CN, 'api.sluice.test');
    assert.equal((await handshake(port, 'shop.tenants.sluice.test', certs.ca)).subject.CN, 'api.sluice.test');
  });

  it('answers a body over the limit with 413 on an HTTP/2 stream, and the connection serves the next one', async () => {
    // The client queues the whole 11 MiB body at once: more than its default 10 MiB of session memory.
    const session = connectHttp2(gateway.url, { ca: readFileSync(certs.ca), maxSessionMemory: 64 });
    try {
      const status = (headers: Record<string, string>, body?: string) =>
        new Promise<number>((resolve) => {
          const stream = session.request({ ':method': 'POST', ':path': '/orders', 'x-api-key': KEY_D, ...headers });
          stream.on('response', (h) => resolve(Number(h[':status'])));
          stream.on('error', () => {}); // the gateway may reset the stream's unread body after answering
          stream.resume();
          stream.end(body);
        });
      const tooLarge = Buffer.alloc(11 * 1024 * 1024); // over the default limits.maxBodyBytes (10 MiB)
      assert.equal(await status({ 'content-length': String(tooLarge.length) }, tooLarge as unknown as string), 413);
      assert.equal(await status({}, '{}'), 200);
    } finally {
      session.close();
    }
  });

  it('answers a CONNECT stream over HTTP/2 with 501 and the JSON body, the session still serving', async () => {
    const session = connectHttp2(gateway.url, { ca: readFileSync(certs.ca) });
    try {
      const { status, body } = await h2Ask(session, { ':method': 'CONNECT', ':authority': 'example.com:443' });
      const reply = { status, body };
      assert.deepEqual(reply, { status: 501, body: '{"error":"method_not_supported"}' });
    } finally {
      session.close();
    }
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
    // a certificate that is not PEM (its key given in its place) is the cert's fault, a key that is not PEM the key's
    assert.throws(config(`tls: { cert: ${certs.serverKey}, key: ${certs.serverKey} }`), (error: unknown) => error instanceof ConfigError && error.message.includes('tls.cert: ') && error.message.includes('is not a PEM certificate'));
    assert.throws(config(`tls: { cert: ${certs.serverCert}, key: ${certs.serverCert} }`), (error: unknown) => error instanceof ConfigError && error.message.includes('tls.key: ') && error.message.includes('is not a PEM private key'));
    assert.throws(config(`admin: { tls: { cert: ${certs.serverCert}, key: /nope.key } }`), (error: unknown) => error instanceof ConfigError && error.message.includes('admin.tls.key: cannot read /nope.key'));
    assert.throws(config('', { SLUICE_TLS_CERT: '/missing.pem', SLUICE_TLS_KEY: certs.serverKey }), (error: unknown) => error instanceof ConfigError && error.message.startsWith('SLUICE_TLS_CERT: tls.cert: cannot read /missing.pem'));
  });
});

describe('draining with HTTP/2 sessions open', () => {
  it('sends GOAWAY: the open stream finishes, the idle session ends, close() does not wait out its grace', async () => {
    const certs = makeCertificates();
    const upstream = await startUpstream((req, res) => {
      req.resume();
      setTimeout(() => res.end('{"slow":true}'), 300);
    });
    const gateway = await startGateway(`tls: { cert: ${certs.serverCert}, key: ${certs.serverKey} }\nroutes: [{ id: r, path: /*, upstream: '\${UP}' }]\ntenants: { unknownKeys: default-rule }\n`, { UP: upstream.url }, { shutdownGraceMs: 60_000 });
    const session = connectHttp2(gateway.url, { ca: readFileSync(certs.ca) });
    try {
      const goaway = new Promise<void>((resolve) => session.once('goaway', () => resolve()));
      const sessionClosed = new Promise<void>((resolve) => session.once('close', () => resolve()));
      const inFlight = h2Ask(session, { ':path': '/slow', 'x-api-key': 'drain-h2-key' }).then(({ status, body }) => ({ status, body }));
      await new Promise((resolve) => setTimeout(resolve, 100)); // the request is upstream now
      const started = Date.now();
      const closing = gateway.close();
      await goaway;
      assert.deepEqual(await inFlight, { status: 200, body: '{"slow":true}' }, 'the stream in flight finished');
      await sessionClosed;
      await closing;
      assert.ok(Date.now() - started < 30_000, 'the drain ended with the session, not at the end of its 60 s grace');
    } finally {
      session.destroy();
      await gateway.close();
      await upstream.close();
      certs.remove();
    }
  });
});
