// auth: jwt through the real gateway over HTTP, against a JWK set this test
// serves on loopback: each algorithm family, every check that refuses a token
// (with its 401, WWW-Authenticate and reason, the upstream never reached),
// the key set rotated and stalled, claims as tenant, limit key and headers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { resilienceRegistry } from '../../src/metrics/registry.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type JwksServer, startJwks } from '../helpers/jwks-server.js';
import { AUDIENCE, ISSUER, sign, type TestKey, testKey, unsignedToken } from '../helpers/jwt-support.js';

const SECRET = 'a-shared-secret-of-at-least-32-bytes!!';

let upstream: TestUpstream;
let upstreamCalls = 0;
let jwks: JwksServer;
let rsa: TestKey;
let ec: TestKey;
let ed: TestKey;
let rotated: TestKey;
let app: RunningSluice;

const yaml = (jwksUrl: string, upstreamUrl: string) => `
auth:
  kind: jwt
  algorithms: [RS256, ES256, EdDSA]
  jwksUrl: ${jwksUrl}
  jwks: { timeoutMs: 300, cooldownMs: 0 }
  issuer: ${ISSUER}
  audience: ${AUDIENCE}
  clockToleranceSeconds: 5
  forwardClaims: { sub: X-User-Id, org_id: X-Org }
limits:
  maxHeaderBytes: 131072
routes:
  - id: orders
    path: /orders
    upstream: ${upstreamUrl}
    anonymous: true
    limits:
      - { id: per-user, key: { claim: sub }, rule: { policy: fixed_window, limit: 2, windowMs: 60000 } }
  - id: open
    path: /open
    upstream: ${upstreamUrl}
    anonymous: true
    auth: none
    limits:
      - { id: open-ceiling, key: route, rule: { policy: fixed_window, limit: 1000, windowMs: 60000 } }
  - id: tenants
    path: /tenants
    upstream: ${upstreamUrl}
    auth:
      kind: jwt
      algorithms: [HS256]
      secretEnv: JWT_SECRET
      issuer: ${ISSUER}
      tenantClaim: org_id
rules:
  - { tenant: acme, route: tenants, policy: fixed_window, limit: 2, windowMs: 60000 }
`;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const hs = { secret: new TextEncoder().encode(SECRET), alg: 'HS256' };
let n = 0;
/** A fresh subject per test, so the per-user limit of one test never refuses another's. */
const subject = () => `user-${++n}`;

async function refused(token: string | undefined, reason: string, status = 401) {
  const before = upstreamCalls;
  const reply = await call(`${app.url}/orders`, { headers: token === undefined ? {} : bearer(token) });
  assert.equal(reply.status, status, reply.body);
  const body = JSON.parse(reply.body) as { error: string; reason: string; message: string };
  assert.equal(body.reason, reason);
  assert.equal(upstreamCalls, before, 'the upstream never sees a refused request');
  if (token !== undefined && token.length > 20) assert.ok(!reply.body.includes(token.slice(-20)), 'the body never quotes the token');
  if (status === 401) {
    assert.equal(body.error, 'invalid_token');
    assert.equal(reply.headers['www-authenticate'], `Bearer error="invalid_token", error_description="${body.message}"`);
  }
  return reply;
}

before(async () => {
  upstream = await startUpstream((req, res) => {
    upstreamCalls++;
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user: req.headers['x-user-id'] ?? null, org: req.headers['x-org'] ?? null }));
  });
  [rsa, ec, ed, rotated] = await Promise.all([testKey('RS256', 'rsa-1'), testKey('ES256', 'ec-1'), testKey('EdDSA', 'ed-1'), testKey('RS256', 'rsa-2')]);
  jwks = await startJwks([rsa.publicJwk, ec.publicJwk, ed.publicJwk]);
  app = await startGateway(yaml(jwks.url, upstream.url), { JWT_SECRET: SECRET });
});

after(async () => {
  await app.close();
  await Promise.all([upstream.close(), jwks.close()]);
});

describe('auth: jwt with a JWKS URL', () => {
  for (const family of ['rsa', 'ec', 'ed'] as const) {
    it(`a good ${family} token passes, its sub forwarded as X-User-Id`, async () => {
      const key = { rsa, ec, ed }[family];
      const sub = subject();
      const reply = await call(`${app.url}/orders`, { headers: bearer(await sign(key, { sub })) });
      assert.equal(reply.status, 200, reply.body);
      assert.equal(JSON.parse(reply.body).user, sub);
    });
  }

  it('a client-sent X-User-Id is dropped, the claim replaces it; an absent claim leaves the header out', async () => {
    const sub = subject();
    const reply = await call(`${app.url}/orders`, { headers: { ...bearer(await sign(rsa, { sub })), 'x-user-id': 'admin', 'X-Org': 'evil' } });
    assert.equal(reply.status, 200);
    assert.deepEqual(JSON.parse(reply.body), { user: sub, org: null });
  });

  it('refuses expired, not yet valid, wrong issuer, wrong audience and a bad signature, naming the check', async () => {
    await refused(await sign(rsa, { sub: subject() }, { expiresIn: -60 }), 'expired');
    await refused(await sign(rsa, { sub: subject() }, { notBefore: 120 }), 'not_yet_valid');
    await refused(await sign(rsa, { sub: subject() }, { issuer: 'https://evil.test/' }), 'bad_issuer');
    await refused(await sign(rsa, { sub: subject() }, { audience: 'other-api' }), 'bad_audience');
    const impostor = await testKey('RS256', 'rsa-1'); // the kid of a real key, signed by another
    await refused(await sign(impostor, { sub: subject() }), 'bad_signature');
  });

  it('the clock tolerance admits a token expired a moment ago', async () => {
    const reply = await call(`${app.url}/orders`, { headers: bearer(await sign(rsa, { sub: subject() }, { expiresIn: -2 })) });
    assert.equal(reply.status, 200);
  });

  it('refuses a missing token, a malformed one and a non-Bearer scheme', async () => {
    await refused(undefined, 'missing');
    await refused('not-a-jwt', 'malformed');
    const reply = await call(`${app.url}/orders`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    assert.equal(reply.status, 401);
    assert.equal(JSON.parse(reply.body).reason, 'malformed');
  });

  it('refuses alg: none and an HS256 token signed with the RSA public key (algorithm confusion)', async () => {
    await refused(unsignedToken({ sub: subject() }, 'rsa-1'), 'bad_algorithm');
    const confused = await sign({ secret: new TextEncoder().encode(rsa.publicPem), alg: 'HS256' }, { sub: subject() }, { kid: 'rsa-1' });
    await refused(confused, 'bad_algorithm');
  });

  it('a 64 KB token is refused as too_large without being parsed', async () => {
    const huge = `${'a'.repeat(32_000)}.${'b'.repeat(33_000)}.c`;
    const started = process.hrtime.bigint();
    await refused(huge, 'too_large');
    assert.ok(process.hrtime.bigint() - started < 1_000_000_000n);
  });

  it('an unknown kid makes the gateway fetch the set again: a rotated key is served', async () => {
    const token = await sign(rotated, { sub: subject() });
    const fetched = jwks.fetches;
    jwks.keys = [rotated.publicJwk, rsa.publicJwk, ec.publicJwk, ed.publicJwk];
    const reply = await call(`${app.url}/orders`, { headers: bearer(token) });
    assert.equal(reply.status, 200, reply.body);
    assert.equal(jwks.fetches, fetched + 1);
    // A kid no set has: refused as unknown_key after one more fetch.
    await refused(await sign(await testKey('RS256', 'nobody'), { sub: subject() }), 'unknown_key');
  });

  it('a JWKS server that stalls: an unknown kid gets a bounded 503, cached keys keep serving', async () => {
    jwks.stall = true;
    try {
      const started = Date.now();
      const stalled = await refused(await sign(await testKey('ES256', 'ec-new'), { sub: subject() }), 'jwks_unavailable', 503);
      assert.ok(Date.now() - started < 2_000, `answered in ${Date.now() - started} ms`);
      assert.equal(stalled.headers['retry-after'], '5');
      assert.equal(JSON.parse(stalled.body).error, 'auth_unavailable');
      const cached = await call(`${app.url}/orders`, { headers: bearer(await sign(ec, { sub: subject() })) });
      assert.equal(cached.status, 200);
    } finally {
      jwks.stall = false;
    }
  });

  it('limits keyed by the sub claim: two subjects have separate buckets', async () => {
    const [a, b] = [subject(), subject()];
    const tokenA = await sign(rsa, { sub: a });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(`${app.url}/orders`, { headers: bearer(tokenA) })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    assert.equal((await call(`${app.url}/orders`, { headers: bearer(await sign(ec, { sub: b })) })).status, 200);
    // A token without the claim the limit is keyed by: 401, never an unkeyed bucket.
    const noSub = await call(`${app.url}/orders`, { headers: bearer(await sign(rsa, {})) });
    assert.equal(noSub.status, 401);
    assert.equal(JSON.parse(noSub.body).error, 'missing_limit_claim');
    assert.match(String(noSub.headers['www-authenticate']), /^Bearer error="invalid_token"/);
  });

  it('a config reload that keeps the auth section keeps its cached keys: no new fetch', async () => {
    const fetched = jwks.fetches;
    app.reconfigure(parseConfig(yaml(jwks.url, upstream.url), { source: 'test.yaml', env: { SLUICE_LISTEN: '127.0.0.1:0', JWT_SECRET: SECRET } }));
    assert.equal((await call(`${app.url}/orders`, { headers: bearer(await sign(ed, { sub: subject() })) })).status, 200);
    assert.equal(jwks.fetches, fetched);
  });

  it('a route with auth: none needs no token', async () => {
    assert.equal((await call(`${app.url}/open`)).status, 200);
  });

  it('refusals are counted in /metrics by reason', async () => {
    const metrics = await resilienceRegistry.metrics();
    for (const reason of ['expired', 'bad_algorithm', 'too_large', 'missing', 'jwks_unavailable']) {
      assert.match(metrics, new RegExp(`sluice_auth_refusals_total\\{reason="${reason}"\\} [1-9]`));
    }
  });
});

describe('auth: jwt with an HS256 secret and the tenant from a claim', () => {
  it("the org_id claim names the tenant: its rule applies, another org's bucket is its own", async () => {
    const acme = await sign(hs, { org_id: 'acme' });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(`${app.url}/tenants`, { headers: bearer(acme) })).status);
    assert.deepEqual(statuses, [200, 200, 429]);
    assert.equal((await call(`${app.url}/tenants`, { headers: bearer(await sign(hs, { org_id: 'globex' })) })).status, 200);
  });

  it('a token without the tenant claim, or one that is no id, is refused as bad_claim', async () => {
    for (const claims of [{}, { org_id: '~admin' }, { org_id: { nested: true } }]) {
      const reply = await call(`${app.url}/tenants`, { headers: bearer(await sign(hs, claims)) });
      assert.equal(reply.status, 401);
      assert.equal(JSON.parse(reply.body).reason, 'bad_claim');
    }
  });

  it('an RS256 token is refused on the HS256 route', async () => {
    const reply = await call(`${app.url}/tenants`, { headers: bearer(await sign(rsa, { org_id: 'acme' })) });
    assert.equal(reply.status, 401);
    assert.equal(JSON.parse(reply.body).reason, 'bad_algorithm');
  });
});
