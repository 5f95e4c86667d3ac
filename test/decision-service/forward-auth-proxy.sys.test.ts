// /decide reads the original request only from the headers the configured
// proxy kind sets (decisionService.forwardAuthProxy), through the real nginx
// started from examples/decision/nginx.conf: a client's own X-Forwarded-Uri /
// -Method (which nginx passes through untouched) do not choose the route, and
// a `host:` route's limit applies to the Host the client sent nginx.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { nodeCall, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { freePort } from '../helpers/ports.js';
import { type RunningProxy, startDecisionSluice, startNginx } from '../helpers/decision-service-support.js';

const portOf = (url: string) => Number(new URL(url).port);

const YAML = `
routes:
  - { id: login, path: /api/login, upstream: 'http://127.0.0.1:9', anonymous: true, limits: [{ id: logins, key: route, rule: { policy: fixed_window, limit: 2, windowMs: 60000 } }] }
  - { id: api-host, host: api.example.com, path: /h, upstream: 'http://127.0.0.1:9', anonymous: true, limits: [{ id: one, key: route, rule: { policy: fixed_window, limit: 1, windowMs: 60000 } }] }
  - { id: elsewhere, path: /elsewhere, upstream: 'http://127.0.0.1:9', anonymous: true, limits: [{ id: roomy, key: route, rule: { policy: fixed_window, limit: 100, windowMs: 60000 } }] }
  - { id: any-host, path: /h, upstream: 'http://127.0.0.1:9', anonymous: true, limits: [{ id: roomy-h, key: route, rule: { policy: fixed_window, limit: 100, windowMs: 60000 } }] }
tenants: { keys: [] }
decisionService:
  refusedStatus: 403
  noRoute: allow
`;

describe('forward-auth behind the real nginx: only the headers nginx sets', () => {
  let upstream: TestUpstream;
  let sluice: RunningSluice;
  let nginx: RunningProxy;
  before(async () => {
    upstream = await startUpstream();
    sluice = await startDecisionSluice(YAML);
    nginx = await startNginx({ listen: await freePort(), sluice: portOf(sluice.decisionUrl!), upstream: portOf(upstream.url) });
  });
  after(async () => {
    await Promise.allSettled([nginx?.stop(), sluice?.close()]);
    await upstream?.close();
  });

  it("a client's X-Forwarded-Uri/-Method do not move its login off the login route's limit", async () => {
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      const reply = await nodeCall(`${nginx.url}/api/login`, { 'x-forwarded-uri': '/elsewhere', 'x-forwarded-method': 'OPTIONS' });
      statuses.push(reply.status);
    }
    assert.deepEqual(statuses, [200, 200, 429, 429, 429, 429]);
  });

  it("a host: route's limit applies to the Host the client sent nginx (case and port as the gateway reads them)", async () => {
    const statuses = [];
    for (const host of ['api.example.com', 'API.example.com', 'api.example.com:80', 'api.example.com']) {
      statuses.push((await nodeCall(`${nginx.url}/h`, { host })).status);
    }
    assert.deepEqual(statuses, [200, 429, 429, 429]);
  });
});
