// The routes a real API needs (issue 21): a catch-all `/*`, routes by host
// (exact and `*.example.com`), stripPrefix and a regex rewrite, request and
// response headers set and removed (the API key stripped, the tenant added),
// and forwarding headers kept only from a trusted proxy. Real HTTP through the
// gateway to a real upstream that echoes what it received.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { nodeCall, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const KEY = 'edge-routes-key-1';

/** A GET with the test's key and the headers given (a Host of its own among them). */
const get = (url: string, path: string, headers: Record<string, string> = {}) => nodeCall(`${url}${path}`, { 'x-api-key': KEY, ...headers });

const YAML = (trusted: string) => `
routes:
  - { id: admin-host, path: /*, host: admin.example.com, upstream: '\${UP}', responseHeaders: { set: { X-Matched: admin-host } } }
  - { id: tenant-hosts, path: /*, host: '*.tenants.example.com', upstream: '\${UP}', responseHeaders: { set: { X-Matched: tenant-hosts } } }
  - id: api
    path: /api/*
    upstream: '\${UP}'
    stripPrefix: true
    requestHeaders: { set: { X-Tenant-Id: '{tenant}', X-Route: '{route}' }, remove: [X-Api-Key] }
    responseHeaders: { set: { X-Served-By: sluice }, remove: [Server, X-Internal] }
  - { id: v1, path: /v1/*, upstream: '\${UP}', rewrite: { pattern: '^/v1/(.*)$', replacement: '/v2/$1' } }
  - { id: everything, path: /*, upstream: '\${UP}', responseHeaders: { set: { X-Matched: everything } } }
tenants:
  keys: [{ key: ${KEY}, tenant: shop-a }]
${trusted}
`;

describe('edge routes', () => {
  let upstream: TestUpstream;
  let gateway: RunningSluice;
  let trustedGateway: RunningSluice;

  before(async () => {
    upstream = await startUpstream((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', server: 'upstream/1.0', 'x-internal': 'secret' });
      res.end(JSON.stringify({ path: req.url, headers: req.headers }));
    });
    gateway = await startGateway(YAML(''), { UP: upstream.url });
    trustedGateway = await startGateway(YAML("clientIp: { trustedProxies: ['127.0.0.1/32'] }"), { UP: upstream.url });
  });
  after(async () => {
    await gateway.close();
    await trustedGateway.close();
    await upstream.close();
  });

  const seen = async (path: string, headers: Record<string, string> = {}) => {
    const reply = await get(gateway.url, path, headers);
    assert.equal(reply.status, 200, reply.body);
    return { reply, upstream: JSON.parse(reply.body) as { path: string; headers: Record<string, string> } };
  };

  it('a catch-all /* serves every path the routes before it do not', async () => {
    for (const path of ['/', '/anything', '/deep/er/path?q=1']) assert.equal((await seen(path)).upstream.path, path);
  });

  it('routes by host, exact and wildcard, whatever the port or case; other hosts fall through', async () => {
    const matched = async (host: string) => (await get(gateway.url, '/p', { host })).headers['x-matched'];
    assert.equal(await matched('admin.example.com'), 'admin-host');
    assert.equal(await matched('Admin.Example.com:8443'), 'admin-host');
    assert.equal(await matched('a.tenants.example.com'), 'tenant-hosts');
    assert.equal(await matched('x.y.tenants.example.com'), 'tenant-hosts');
    assert.equal(await matched('tenants.example.com'), 'everything', 'a wildcard does not match its own apex');
    assert.equal(await matched('other.example.com'), 'everything');
  });

  it('strips the prefix, sets the tenant and route headers, removes the API key', async () => {
    const { reply, upstream: got } = await seen('/api/orders/7?expand=1');
    assert.equal(got.path, '/orders/7?expand=1');
    assert.equal(got.headers['x-tenant-id'], 'shop-a');
    assert.equal(got.headers['x-route'], 'api');
    assert.equal(got.headers['x-api-key'], undefined, 'the key never reaches the upstream');
    assert.equal(reply.headers['x-served-by'], 'sluice');
    assert.equal(reply.headers.server, undefined);
    assert.equal(reply.headers['x-internal'], undefined);
    assert.equal(reply.headers['x-ratelimit-limit'], '20', "the gateway's own headers stay");
    assert.equal((await seen('/api')).upstream.path, '/');
  });

  it('rewrites a path with the pattern and its groups, keeping the query', async () => {
    assert.equal((await seen('/v1/orders/9?x=y')).upstream.path, '/v2/orders/9?x=y');
  });

  it('drops forwarding headers a client sends straight to it; keeps and extends a trusted proxy’s', async () => {
    const spoofed = { 'x-forwarded-for': '6.6.6.6', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example', forwarded: 'for=6.6.6.6' };
    const direct = (await seen('/x', spoofed)).upstream.headers;
    assert.deepEqual([direct['x-forwarded-for'], direct['x-forwarded-proto'], direct['x-forwarded-host'], direct.forwarded], ['127.0.0.1', 'http', new URL(gateway.url).host, `for=127.0.0.1;proto=http;host="${new URL(gateway.url).host}"`]);
    const reply = await get(trustedGateway.url, '/x', { 'x-forwarded-for': '203.0.113.9', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com', forwarded: 'for=203.0.113.9;proto=https' });
    const behind = (JSON.parse(reply.body) as { headers: Record<string, string> }).headers;
    assert.equal(behind['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
    assert.equal(behind['x-forwarded-proto'], 'https', 'the scheme the client used at the edge');
    assert.equal(behind['x-forwarded-host'], 'api.example.com');
    // Sluice reads X-Forwarded-For here: the proxy's Forwarded is one it may have passed on from the client unread (issue 37).
    assert.equal(behind.forwarded, `for=127.0.0.1;proto=http;host="${new URL(trustedGateway.url).host}"`);
  });
});

describe('edge route config errors', () => {
  const base = (route: string) => `routes:\n  - { id: r, upstream: 'http://127.0.0.1:1', ${route} }\n`;
  const refused: [string, string, string][] = [
    ['stripPrefix without a prefix path', 'path: /orders, stripPrefix: true', 'routes[0].stripPrefix: needs a prefix path such as /api/*'],
    ['a rewrite that is no regular expression', "path: /*, rewrite: { pattern: '(', replacement: '/x' }", 'routes[0].rewrite.pattern: is not a regular expression'],
    ['a rewrite to a relative path', "path: /*, rewrite: { pattern: 'a', replacement: 'x' }", 'routes[0].rewrite.replacement: must start with /'],
    ['a header name that is no token', "path: /*, requestHeaders: { set: { 'Bad Name': x } }", 'routes[0].requestHeaders.set.Bad Name: must be a header name'],
    ['a header value with CR LF', 'path: /*, responseHeaders: { set: { X-A: "a\\r\\nSet-Cookie: b" } }', 'routes[0].responseHeaders.set.X-A: must not hold CR, LF or NUL'],
    ['a host with a port', 'path: /*, host: "api.example.com:80"', 'routes[0].host: must be a host name'],
    ['an empty upstream list', 'path: /*, upstream: []', 'routes[0].upstream'],
    ['a weight of 0', "path: /*, upstream: [{ url: 'http://127.0.0.1:1', weight: 0 }]", 'routes[0].upstream'],
  ];
  for (const [name, route, message] of refused) {
    it(`refuses ${name}, naming the field`, () => {
      const text = route.includes('upstream:') ? `routes:\n  - { id: r, ${route} }\n` : base(route);
      assert.throws(
        () => parseConfig(text, { source: 'edge.yaml' }),
        (error: unknown) => error instanceof ConfigError && error.message.includes(message),
      );
    });
  }

  it('loads a list of weighted instances', () => {
    const config = parseConfig(`routes:\n  - { id: r, path: /*, upstream: ['http://127.0.0.1:1', { url: 'http://127.0.0.1:2', weight: 3 }] }\n`);
    assert.deepEqual(config.routes[0]!.upstreams, [
      { url: 'http://127.0.0.1:1', weight: 1 },
      { url: 'http://127.0.0.1:2', weight: 3 },
    ]);
  });
});
