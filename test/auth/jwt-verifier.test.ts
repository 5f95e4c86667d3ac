// The verifier without a network: the token found in each place it may be
// sent, the plan and tenant read from their claims (the plan is handed on as
// identity.plan for the plans to use), and duplicates refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JwtAuthConfig } from '../../src/auth/jwt-config.js';
import { JwtVerifier } from '../../src/auth/jwt-verifier.js';
import { AUDIENCE, ISSUER, sign } from './jwt-support.js';

const SECRET = 's'.repeat(40);
const hs = { secret: new TextEncoder().encode(SECRET), alg: 'HS256' };
const config = (extra: Partial<JwtAuthConfig> = {}): JwtAuthConfig => ({
  kind: 'jwt',
  algorithms: ['HS256'],
  key: { kind: 'secret', secret: SECRET },
  issuer: ISSUER,
  audience: AUDIENCE,
  clockToleranceSeconds: 0,
  maxTokenBytes: 8_192,
  token: { kind: 'bearer' },
  tenantClaim: undefined,
  planClaim: undefined,
  forwardClaims: {},
  ...extra,
});

describe('JwtVerifier', () => {
  it('reads the plan from planClaim and the tenant from tenantClaim; a token without the plan claim has none', async () => {
    const verifier = new JwtVerifier(config({ tenantClaim: 'org_id', planClaim: 'plan' }));
    const token = await sign(hs, { org_id: 'acme', plan: 'pro', sub: 'u1' });
    const identity = await verifier.identify({ authorization: `Bearer ${token}` });
    assert.ok(typeof identity === 'object');
    assert.equal(identity.tenant, 'acme');
    assert.equal(identity.plan, 'pro');
    assert.equal(identity.claims.sub, 'u1');
    const noPlan = await verifier.identify({ authorization: `Bearer ${await sign(hs, { org_id: 'acme' })}` });
    assert.ok(typeof noPlan === 'object');
    assert.equal(noPlan.plan, undefined);
  });

  it('finds the token in a named header (with or without Bearer) or a cookie', async () => {
    const token = await sign(hs, { sub: 'u1' });
    const header = new JwtVerifier(config({ token: { kind: 'header', name: 'x-token' } }));
    assert.equal(typeof (await header.identify({ 'x-token': token })), 'object');
    assert.equal(typeof (await header.identify({ 'x-token': `Bearer ${token}` })), 'object');
    assert.equal(await header.identify({ authorization: `Bearer ${token}` }), 'missing');
    const cookie = new JwtVerifier(config({ token: { kind: 'cookie', name: 'session' } }));
    assert.equal(typeof (await cookie.identify({ cookie: `theme=dark; session=${token}` })), 'object');
    assert.equal(await cookie.identify({ cookie: `session=${token}; session=${token}` }), 'malformed');
    assert.equal(await cookie.identify({ cookie: 'theme=dark' }), 'missing');
  });

  it('refuses an Authorization header sent twice, and a token over maxTokenBytes before parsing it', async () => {
    const token = await sign(hs, { sub: 'u1' });
    const verifier = new JwtVerifier(config({ maxTokenBytes: 256 }));
    assert.equal(await verifier.identify({ authorization: `Bearer ${token}` }, ['Authorization', `Bearer ${token}`, 'authorization', 'Bearer other']), 'malformed');
    assert.equal(await verifier.identify({ authorization: `Bearer ${'a'.repeat(300)}` }), 'too_large');
    assert.equal(await verifier.identify({ authorization: `Bearer ${'a'.repeat(70_000)}` }), 'too_large');
  });
});
