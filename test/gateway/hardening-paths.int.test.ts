// Issue 37, items 4, 7 and 11: a client must not step around a route's limit
// by spelling its path or host differently. The route is matched on the
// normalized path (unreserved escapes decoded, dot and empty segments
// resolved, a fragment refused), lower-cased on a `caseInsensitive` route, and
// the upstream is sent that path; a rewrite or stripPrefix never sends a path
// outside its target; host names match without case, port or trailing dot.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type RunningSluice, startSluice } from '../../src/app.js';
import { loadConfig } from '../../src/decision-service/load-config.js';
import { recordingUpstream, sendRaw } from './hardening-support.js';
import { silent, startGateway, type TestUpstream } from '../helpers/gateway-support.js';

const BIG = '{ policy: token_bucket, capacity: 1000, refillPerSecond: 100 }';
const YAML = `
routes:
  - id: login
    methods: [POST]
    path: /api/login
    upstream: '\${UP}'
    anonymous: true
    limits: [{ id: login-per-ip, key: ip, rule: { policy: token_bucket, capacity: 6, refillPerSecond: 0.001 } }]
    responseHeaders: { set: { X-Matched: login } }
  - id: signin
    methods: [POST]
    path: /api/signin
    caseInsensitive: true
    upstream: '\${UP}'
    anonymous: true
    limits: [{ id: signin-per-ip, key: ip, rule: { policy: token_bucket, capacity: 3, refillPerSecond: 0.001 } }]
    responseHeaders: { set: { X-Matched: signin } }
  - { id: v1, limits: [{ id: v1-all, key: route, rule: ${BIG} }], path: /v1/*, upstream: '\${UP}', anonymous: true, rewrite: { pattern: '^/v1/(.*)$', replacement: '/public/v2/$1' } }
  - { id: dots, limits: [{ id: dots-all, key: route, rule: ${BIG} }], path: /r/*, upstream: '\${UP}', anonymous: true, rewrite: { pattern: '^/r/(.*)x$', replacement: '/public/$1' } }
  - { id: svc, limits: [{ id: svc-all, key: route, rule: ${BIG} }], path: /svc/*, upstream: '\${UP}', anonymous: true, stripPrefix: true }
  - id: api-host
    path: /*
    host: api.example.com
    upstream: '\${UP}'
    anonymous: true
    limits: [{ id: host-per-ip, key: ip, rule: { policy: token_bucket, capacity: 2, refillPerSecond: 0.001 } }]
    responseHeaders: { set: { X-Matched: api-host } }
  - { id: api, limits: [{ id: api-all, key: route, rule: ${BIG} }], path: /*, upstream: '\${UP}', anonymous: true, responseHeaders: { set: { X-Matched: api } } }
`;

describe('hardening: paths and hosts', () => {
  let upstream: TestUpstream & { paths: string[] };
  let gateway: RunningSluice;

  before(async () => {
    upstream = await recordingUpstream();
    gateway = await startGateway(YAML, { UP: upstream.url });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('refuses a fragment with 400 invalid_path; the upstream never sees it', async () => {
    const before = upstream.paths.length;
    const reply = await sendRaw(gateway.url, 'POST', '/api/login#x');
    assert.equal(reply.status, 400, reply.body);
    assert.equal(JSON.parse(reply.body).error, 'invalid_path');
    assert.equal((await sendRaw(gateway.url, 'GET', '/api/orders?q=1#frag')).status, 400);
    assert.equal(upstream.paths.length, before);
  });

  it('counts every spelling of /api/login against the login limit, and forwards the normalized path', async () => {
    const spellings = ['/api/login', '/api/%6Cogin', '/api//login', '/api/./login', '/api/x/../login', '/%61pi/login/', '/api/%6c%6f%67%69%6e', '/api/login'];
    const replies = [];
    for (const path of spellings) replies.push(await sendRaw(gateway.url, 'POST', path));
    assert.deepEqual(
      replies.map((reply) => reply.headers['x-matched'] ?? reply.status),
      ['login', 'login', 'login', 'login', 'login', 'login', 429, 429],
      'each spelling is the login route, and the seventh is past its limit of 6',
    );
    const served = replies.filter((reply) => reply.status === 200).map((reply) => JSON.parse(reply.body).path);
    assert.deepEqual(served, ['/api/login', '/api/login', '/api/login', '/api/login', '/api/login', '/api/login/']);
  });

  it('keeps the escapes that are not unreserved (upper-cased), and the query as sent', async () => {
    const reply = await sendRaw(gateway.url, 'GET', '/files/a%2fb%20c?x=%2e%2e#');
    assert.equal(reply.status, 400, 'a # anywhere in the target is refused');
    const ok = await sendRaw(gateway.url, 'GET', '/files/a%2fb%20c/%7e?x=%2e%2e');
    assert.equal(JSON.parse(ok.body).path, '/files/a%2Fb%20c/~?x=%2e%2e');
  });

  it('refuses a .. that climbs above the root, and a malformed escape', async () => {
    for (const path of ['/..', '/api/../../etc/passwd', '/api/%2e%2e/%2E%2E/x', '/api/%zz']) {
      const reply = await sendRaw(gateway.url, 'GET', path);
      assert.equal(reply.status, 400, `${path}: ${reply.body}`);
      assert.equal(JSON.parse(reply.body).error, 'invalid_path');
    }
  });

  it('a caseInsensitive route matches the path lower-cased (and forwards it as sent, normalized)', async () => {
    const replies = [];
    for (const path of ['/api/signin', '/API/SignIn', '/api/SIGNIN', '/Api/Signin']) replies.push(await sendRaw(gateway.url, 'POST', path));
    assert.deepEqual(
      replies.map((reply) => reply.headers['x-matched'] ?? reply.status),
      ['signin', 'signin', 'signin', 429],
    );
    assert.equal(JSON.parse(replies[1]!.body).path, '/API/SignIn');
    // Without the option a route is case-sensitive: /api/Login is not the login route (docs: the upstream must be too).
    assert.equal((await sendRaw(gateway.url, 'POST', '/api/Login')).headers['x-matched'], 'api');
  });

  it('a rewrite never sends dot segments, and never a path outside its target', async () => {
    const before = upstream.paths.length;
    for (const path of ['/v1/../../internal/secret', '/v1/a/%2e%2e/%2e%2e/%2e%2e/internal/secret']) {
      const reply = await sendRaw(gateway.url, 'GET', path);
      assert.equal(reply.status, 400, `${path}: ${reply.body}`);
    }
    // `..x` is one segment as sent; the rewrite cuts it to `..`, which would climb out of /public/.
    const escaping = await sendRaw(gateway.url, 'GET', '/r/..x');
    assert.equal(escaping.status, 400, escaping.body);
    assert.equal(JSON.parse(escaping.body).error, 'invalid_path');
    assert.deepEqual(upstream.paths.slice(before), []);
    const ok = await sendRaw(gateway.url, 'GET', '/v1/a/./b//c?q=1');
    assert.equal(JSON.parse(ok.body).path, '/public/v2/a/b/c?q=1');
  });

  it('stripPrefix never turns // into a network-path reference', async () => {
    const reply = await sendRaw(gateway.url, 'GET', '/svc//evil.example/x');
    assert.equal(reply.status, 200, reply.body);
    assert.equal(JSON.parse(reply.body).path, '/evil.example/x');
  });

  it('matches a host route whatever the case, port or trailing dot of the Host', async () => {
    const hosts = ['api.example.com.', 'API.Example.COM.:8080', 'api.example.com'];
    const replies = [];
    for (const host of hosts) replies.push(await sendRaw(gateway.url, 'GET', '/anything', { host }));
    assert.deepEqual(
      replies.map((reply) => reply.headers['x-matched'] ?? reply.status),
      ['api-host', 'api-host', 429],
      'every spelling is the host route, and the third is past its limit of 2',
    );
  });
});

describe('hardening: examples/login-protection.yaml as shipped', () => {
  it('/api/login#x, /api/Login and /api/%6Cogin are refused or counted by the login route limit', async () => {
    // The upstream serves every spelling alike, as Express does (case-insensitive routing, decoded paths).
    const upstream = await recordingUpstream();
    const config = loadConfig('examples/login-protection.yaml', { SLUICE_LISTEN: '127.0.0.1:0', UPSTREAM_URL: upstream.url });
    const app = await startSluice(config, { logger: silent });
    try {
      const replies = [];
      for (let i = 0; i < 5; i++) for (const path of ['/api/login#x', '/api/Login', '/api/%6Cogin']) replies.push(await sendRaw(app.url, 'POST', path));
      const statuses = replies.map((reply) => reply.status);
      assert.equal(statuses.filter((status) => status === 400).length, 5, 'every fragment refused');
      // The login limit (1 + burst 5, then 1 a second) counted every other one: ten in a row pass it only if spread over 4 s.
      for (const reply of replies.filter((r) => r.status !== 400)) assert.match(String(reply.headers['ratelimit-policy']), /"login-per-ip"/);
      assert.ok(statuses.includes(429), statuses.join(' '));
      assert.ok(upstream.paths.every((path) => path.toLowerCase() === '/api/login'), upstream.paths.join(' '));
    } finally {
      await app.close();
      await upstream.close();
    }
  });
});
