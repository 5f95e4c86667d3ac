// Forward-auth (/decide) on a route with auth: jwt: the proxy forwards the
// client's Authorization, the decision service verifies it as the gateway
// does, answers a refused token with the 401 the proxy passes on, and an
// admitted one with the claims for the proxy to copy upstream.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call } from '../helpers/gateway-support.js';
import { startDecisionSluice } from '../helpers/decision-service-support.js';
import { sign, type TestKey, testKey } from '../helpers/jwt-support.js';

describe('forward-auth /decide with auth: jwt', () => {
  let sluice: RunningSluice;
  let dir: string;
  let key: TestKey;
  before(async () => {
    key = await testKey('ES256', 'ec-1');
    dir = mkdtempSync(join(tmpdir(), 'sluice-jwt-fa-'));
    const jwksFile = join(dir, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify({ keys: [key.publicJwk] }));
    sluice = await startDecisionSluice(`
auth: { kind: jwt, algorithms: [ES256], jwksFile: ${JSON.stringify(jwksFile)}, issuer: https://idp.test/, audience: orders-api, forwardClaims: { sub: X-User-Id } }
routes:
  - id: orders
    path: /orders
    upstream: http://127.0.0.1:9
    anonymous: true
    limits: [{ id: per-user, key: { claim: sub }, rule: { policy: fixed_window, limit: 2, windowMs: 60000 } }]
decisionService: { forwardAuthProxy: nginx }
`);
  });
  after(async () => {
    await sluice.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const decide = (token?: string) => call(`${sluice.decisionUrl}/decide`, { headers: { 'x-original-method': 'GET', 'x-original-uri': '/orders', ...(token ? { authorization: `Bearer ${token}` } : {}) } });

  it('admits a good token, with its sub as X-User-Id for the proxy; limits each sub apart', async () => {
    const alice = await sign(key, { sub: 'alice' });
    const replies = [await decide(alice), await decide(alice), await decide(alice)];
    assert.deepEqual(replies.map((reply) => reply.status), [200, 200, 429]);
    assert.equal(replies[0]!.headers['x-user-id'], 'alice');
    assert.equal((await decide(await sign(key, { sub: 'bob' }))).status, 200);
  });

  it('refuses a missing, expired or foreign token with 401 and its WWW-Authenticate', async () => {
    const missing = await decide();
    assert.equal(missing.status, 401);
    assert.equal(JSON.parse(missing.body).reason, 'missing');
    const expired = await decide(await sign(key, { sub: 'carol' }, { expiresIn: -3600 }));
    assert.equal(expired.status, 401);
    assert.equal(expired.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="the token has expired (exp)"');
    const foreign = await decide(await sign(await testKey('ES256', 'ec-1'), { sub: 'carol' }));
    assert.equal(JSON.parse(foreign.body).reason, 'bad_signature');
  });
});
