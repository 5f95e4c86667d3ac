// Over HTTP/2 a client writes `:method` and `:authority` itself: a lower-case
// method must not step around a `methods: [POST]` route's limit (it is refused
// 400, as nginx does), and `:authority` wins over a `host` header that
// contradicts it (RFC 9113 §8.3.1), so a host route keeps its limit.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { h2Get, h2Session } from './h2-support.js';
import { startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

describe('HTTP/2 :method and :authority', () => {
  let certs: TestCertificates;
  let upstream: TestUpstream;
  const reached: { method: string | undefined; host: string | undefined }[] = [];
  let gateway: RunningSluice;

  before(async () => {
    certs = makeCertificates();
    upstream = await startUpstream((req, res) => {
      reached.push({ method: req.method, host: req.headers.host });
      req.resume();
      res.end('{"ok":true}');
    });
    gateway = await startGateway(`
tls: { cert: ${certs.serverCert}, key: ${certs.serverKey}, http2: true }
routes:
  - { id: login, path: /login, methods: [POST], anonymous: true, upstream: '\${UP}', limits: [{ id: login-ip, key: ip, rule: { policy: fixed_window, limit: 1, windowMs: 600000 } }] }
  - { id: shop, host: shop.example, path: '/*', anonymous: true, upstream: '\${UP}', limits: [{ id: shop-ip, key: ip, rule: { policy: fixed_window, limit: 1, windowMs: 600000 } }] }
  - { id: open, path: '/*', anonymous: true, upstream: '\${UP}', limits: [{ id: open-ip, key: ip, rule: { policy: fixed_window, limit: 1000, windowMs: 600000 } }] }
`, { UP: upstream.url });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
    certs.remove();
  });

  it('a method that is not an upper-case token is refused 400 and never reaches the upstream', async () => {
    const session = h2Session(gateway.url, certs);
    reached.length = 0;
    // (nghttp2 itself resets a method with non-token characters)
    for (const method of ['post', 'Post']) {
      const answer = await h2Get(session, { ':method': method, ':path': '/login' }).answer;
      assert.equal(answer.status, 400, method);
      assert.equal(JSON.parse(answer.body).error, 'bad_request');
    }
    assert.deepEqual(reached, []);
    const statuses = [];
    for (let i = 0; i < 2; i++) statuses.push((await h2Get(session, { ':method': 'POST', ':path': '/login' }).answer).status);
    assert.deepEqual(statuses, [200, 429], 'POST still has its limit');
    session.close();
  });

  it(':authority wins over a host header that contradicts it', async () => {
    const session = h2Session(gateway.url, certs);
    const statuses = [];
    for (let i = 0; i < 2; i++) statuses.push((await h2Get(session, { ':authority': 'shop.example', host: 'other.example', ':path': '/cart' }).answer).status);
    assert.deepEqual(statuses, [200, 429], "the shop route's limit applies");
    session.close();
  });
});
