// The lists in the decision service's forward-auth (/decide): a denied client
// is the 403 {"error":"denied"} the proxy passes on, an allowed one a 200 with
// no limit decided, a limit-scoped allow lifts its limit; the address is the
// one the trusted-proxy rules resolve from the proxy's X-Forwarded-For.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call, startGateway } from '../helpers/gateway-support.js';
import { freePort } from '../helpers/ports.js';

const config = (port: number) => `
routes:
  - id: api
    path: /api/*
    upstream: http://127.0.0.1:9
    anonymous: true
    limits:
      - { id: per-ip, key: ip, rule: { policy: fixed_window, limit: 1, windowMs: 600000 } }
clientIp: { trustedProxies: [127.0.0.1/32] }
decisionService: { httpListen: 127.0.0.1:${port} }
lists:
  - { action: deny, cidr: 203.0.113.0/24 }
  - { action: allow, cidr: 203.0.113.5 }
  - { action: allow, cidr: 198.51.100.0/24, limit: per-ip }
`;

describe('allow and deny lists in forward-auth', () => {
  let app: RunningSluice;
  before(async () => {
    app = await startGateway(config(await freePort()));
  });
  after(() => app.close());
  const decide = (ip: string) => call(`${app.decisionUrl}/decide`, { headers: { 'x-original-uri': '/api/orders', 'x-original-method': 'GET', 'x-forwarded-for': ip } });

  it('denies with 403 and the code, allows without deciding a limit', async () => {
    const denied = await decide('203.0.113.9');
    assert.equal(denied.status, 403);
    assert.deepEqual(JSON.parse(denied.body), { error: 'denied' });
    const allowed = [];
    for (let i = 0; i < 3; i++) allowed.push(await decide('203.0.113.5'));
    assert.deepEqual(allowed.map((reply) => reply.status), [200, 200, 200]);
    assert.deepEqual(Object.keys(allowed[0]!.headers).filter((name) => name.includes('ratelimit')), []);
    assert.deepEqual([(await decide('192.0.2.1')).status, (await decide('192.0.2.1')).status], [200, 429], 'an unlisted client is limited');
    assert.deepEqual([(await decide('198.51.100.1')).status, (await decide('198.51.100.1')).status], [200, 200], 'per-ip lifted for the listed network');
  });
});
