// Allow and deny lists through the real gateway over real HTTP: a deny is a
// 403 naming the code (never the entry) before any limit is charged or the
// upstream is reached; an allow skips every limit and is counted allowlisted;
// a limit-scoped allow lifts that one limit; the client address is the one the
// trusted-proxy rules resolve.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';

const config = `
routes:
  - id: api
    path: /api
    upstream: \${UP}
    anonymous: true
    limits:
      - { id: api-ceiling, key: route, rule: { policy: fixed_window, limit: 2, windowMs: 600000 } }
  - id: login
    path: /login
    upstream: \${UP}
    anonymous: true
    limits:
      - { id: login-ceiling, key: route, rule: { policy: fixed_window, limit: 100, windowMs: 600000 } }
      - { id: login-per-ip, key: ip, rule: { policy: fixed_window, limit: 1, windowMs: 600000 } }
clientIp: { trustedProxies: [127.0.0.1/32, '::1/128'] }
lists:
  - { action: deny, cidr: 203.0.113.0/24, note: a scanner network }
  - { action: allow, cidr: 203.0.113.5, note: our monitor inside it }
  - { action: allow, cidr: '2001:db8::/32' }
  - { action: deny, header: { name: User-Agent, value: badbot/1.0 } }
  - { action: deny, cidr: 192.0.2.0/24, routes: [login] }
  - { action: deny, cidr: 198.18.0.0/15, expiresAt: '2020-01-01T00:00:00Z' }
  - { action: allow, cidr: 100.64.0.0/10, limit: login-per-ip }
`;

const from = (ip: string, extra: Record<string, string> = {}) => ({ headers: { 'x-forwarded-for': ip, ...extra } });
const listed = async () => (await resilienceRegistry.getSingleMetricAsString('sluice_list_decisions_total')).split('\n').filter((line) => !line.startsWith('#') && line !== '');

describe('allow and deny lists through the gateway', () => {
  let upstream: TestUpstream;
  let hits = 0;
  let gateway: RunningSluice | undefined;
  const start = async () => {
    gateway = await startGateway(config, { UP: upstream.url });
    return gateway.url;
  };
  before(async () => {
    upstream = await startUpstream((_req, res) => {
      hits++;
      res.end('ok');
    });
  });
  afterEach(() => gateway?.close());
  after(() => upstream.close());

  it('a denied network gets 403 {"error":"denied"} without reaching the upstream or charging a limit', async () => {
    const url = await start();
    hits = 0;
    for (let i = 0; i < 3; i++) {
      const reply = await call(`${url}/api`, from('203.0.113.77'));
      assert.equal(reply.status, 403);
      assert.deepEqual(JSON.parse(reply.body), { error: 'denied' });
      assert.ok(!reply.body.includes('203.0.113') && !reply.body.includes('scanner'), 'the body never names the entry');
      assert.equal(reply.headers.ratelimit, undefined);
    }
    assert.equal(hits, 0);
    // the route ceiling (2) is untouched by the three refusals
    assert.deepEqual([200, 200, 429], [(await call(`${url}/api`, from('10.0.0.1'))).status, (await call(`${url}/api`, from('10.0.0.2'))).status, (await call(`${url}/api`, from('10.0.0.3'))).status]);
  });

  it('an allowed address inside a denied network passes (most specific wins), with no limit applied, counted allowlisted', async () => {
    const url = await start();
    const before = await listed();
    const replies = [];
    for (let i = 0; i < 5; i++) replies.push(await call(`${url}/api`, from('203.0.113.5')));
    assert.deepEqual(replies.map((reply) => reply.status), [200, 200, 200, 200, 200]);
    assert.deepEqual(Object.keys(replies[0]?.headers ?? {}).filter((name) => name.includes('ratelimit')), [], 'no limit headers: no limit applied');
    const limited = await call(`${url}/api`, from('10.0.0.1'));
    assert.ok(Object.keys(limited.headers).some((name) => name.includes('ratelimit')), 'a request that is not listed gets them');
    // an IPv6 network allow, the same: the ceiling of 2 never applies
    for (let i = 0; i < 3; i++) assert.equal((await call(`${url}/api`, from('2001:db8::7'))).status, 200);
    const after = await listed();
    const count = (lines: string[]) => Number(lines.find((line) => line.includes('outcome="allowlisted"'))?.split(' ')[1] ?? 0);
    assert.equal(count(after) - count(before), 8);
  });

  it('a header value, a route-scoped entry and an expired entry', async () => {
    const url = await start();
    assert.equal((await call(`${url}/api`, from('10.1.1.1', { 'user-agent': 'badbot/1.0' }))).status, 403);
    assert.equal((await call(`${url}/api`, from('10.1.1.1', { 'user-agent': 'curl/8' }))).status, 200);
    assert.equal((await call(`${url}/login`, from('192.0.2.9'))).status, 403);
    assert.equal((await call(`${url}/api`, from('192.0.2.9'))).status, 200, 'the login-only entry does not apply to api');
    assert.equal((await call(`${url}/login`, from('198.18.0.1'))).status, 200, 'an expired deny no longer applies');
  });

  it('a limit-scoped allow lifts that limit and keeps the others', async () => {
    const url = await start();
    assert.deepEqual([(await call(`${url}/login`, from('10.9.9.9'))).status, (await call(`${url}/login`, from('10.9.9.9'))).status], [200, 429], 'per-ip applies elsewhere');
    const lifted = [];
    for (let i = 0; i < 3; i++) lifted.push(await call(`${url}/login`, from('100.64.1.1')));
    assert.deepEqual(lifted.map((reply) => reply.status), [200, 200, 200]);
    assert.equal(lifted[0]?.headers['x-ratelimit-limit'], '100', 'the route ceiling still applies');
  });

  it('a client cannot pick its address: X-Forwarded-For from an untrusted peer is not read', async () => {
    // The peer (127.0.0.1) is trusted here, so the header is believed; the ClientIpResolver tests cover untrusted peers.
    // What matters for the lists: the entry is matched against the resolved address, not the right-most raw hop.
    const url = await start();
    assert.equal((await call(`${url}/api`, from('203.0.113.5, 203.0.113.66'))).status, 403, 'the right-most untrusted hop is the client');
  });
});
