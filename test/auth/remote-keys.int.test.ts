// The JWK set at a URL, its fetch policy alone: at most one fetch per
// cooldown whatever the outcome (made-up kids, a provider that stalls), and
// the stale set refreshed behind requests that keep being served.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JwtAuthConfig } from '../../src/auth/jwt-config.js';
import { JwtVerifier } from '../../src/auth/jwt-verifier.js';
import { startJwks } from '../helpers/jwks-server.js';
import { AUDIENCE, ISSUER, sign, testKey } from '../helpers/jwt-support.js';

// The cache of verified tokens is off but where a test is about it: the others count fetches, which a hit skips.
const verifierFor = (url: string, jwks: { timeoutMs: number; cooldownMs: number; cacheMaxAgeMs: number }, cache = { maxEntries: 0, maxAgeSeconds: 60 }) =>
  new JwtVerifier({
    kind: 'jwt',
    algorithms: ['ES256'],
    key: { kind: 'remote', url, ...jwks },
    issuer: ISSUER,
    audience: AUDIENCE,
    clockToleranceSeconds: 0,
    maxTokenBytes: 8_192,
    cache,
    token: { kind: 'bearer' },
    tenantClaim: undefined,
    planClaim: undefined,
    forwardClaims: {},
  } satisfies JwtAuthConfig);
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('RemoteKeys', () => {
  it('made-up kids inside the cooldown are unknown_key at once, with no fetch', async () => {
    const key = await testKey('ES256', 'ec-1');
    const jwks = await startJwks([key.publicJwk]);
    try {
      const verifier = verifierFor(jwks.url, { timeoutMs: 500, cooldownMs: 60_000, cacheMaxAgeMs: 600_000 });
      assert.equal(typeof (await verifier.identify(bearer(await sign(key, { sub: 'a' })))), 'object');
      for (let i = 0; i < 20; i++) assert.equal(await verifier.identify(bearer(await sign(key, { sub: 'a' }, { kid: `made-up-${i}` }))), 'unknown_key');
      assert.equal(jwks.fetches, 1);
    } finally {
      await jwks.close();
    }
  });

  it('a stalled provider with nothing cached: one bounded wait, then refusals without a fetch until the cooldown ends', async () => {
    const key = await testKey('ES256', 'ec-1');
    const jwks = await startJwks([key.publicJwk]);
    jwks.stall = true;
    try {
      const verifier = verifierFor(jwks.url, { timeoutMs: 200, cooldownMs: 60_000, cacheMaxAgeMs: 600_000 });
      const token = bearer(await sign(key, { sub: 'a' }));
      const started = Date.now();
      assert.equal(await verifier.identify(token), 'jwks_unavailable');
      assert.ok(Date.now() - started < 1_500, `waited ${Date.now() - started} ms`);
      const again = Date.now();
      assert.equal(await verifier.identify(token), 'jwks_unavailable');
      assert.ok(Date.now() - again < 100, 'no second wait inside the cooldown');
      assert.equal(jwks.fetches, 1);
    } finally {
      await jwks.close();
    }
  });

  it('a stale set keeps serving while it is fetched again behind, and the new set is used once it arrives', async () => {
    const [first, second] = [await testKey('ES256', 'ec-1'), await testKey('ES256', 'ec-2')];
    const jwks = await startJwks([first.publicJwk]);
    try {
      const verifier = verifierFor(jwks.url, { timeoutMs: 500, cooldownMs: 0, cacheMaxAgeMs: 50 });
      const token = bearer(await sign(first, { sub: 'a' }));
      assert.equal(typeof (await verifier.identify(token)), 'object');
      jwks.stall = true;
      await new Promise((resolve) => setTimeout(resolve, 80)); // stale now
      const started = Date.now();
      assert.equal(typeof (await verifier.identify(token)), 'object', 'served from the stale set');
      assert.ok(Date.now() - started < 100, 'without waiting on the stalled fetch');
      jwks.stall = false;
      jwks.keys = [second.publicJwk];
      await new Promise((resolve) => setTimeout(resolve, 600)); // the stalled fetch times out; the next stale read refetches
      await verifier.identify(token);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(verifier.remote?.kids(), ['ec-2']);
    } finally {
      await jwks.close();
    }
  });

  it('a key set that changes clears the verified tokens: a token of a key taken out is refused, not served from the cache', async () => {
    const [first, second] = [await testKey('ES256', 'ec-1'), await testKey('ES256', 'ec-2')];
    const jwks = await startJwks([first.publicJwk]);
    try {
      const verifier = verifierFor(jwks.url, { timeoutMs: 500, cooldownMs: 0, cacheMaxAgeMs: 600_000 }, { maxEntries: 100, maxAgeSeconds: 600 });
      const old = bearer(await sign(first, { sub: 'a' }));
      const identity = await verifier.identify(old);
      assert.ok(typeof identity === 'object');
      assert.equal(await verifier.identify(old), identity, 'cached');
      assert.equal(jwks.fetches, 1);
      // The provider rotates: ec-1 is gone. A token of the new key makes the gateway fetch the set again.
      jwks.keys = [second.publicJwk];
      assert.equal(typeof (await verifier.identify(bearer(await sign(second, { sub: 'b' })))), 'object');
      assert.equal(jwks.fetches, 2);
      assert.equal(await verifier.identify(old), 'unknown_key', 'the cache went with the key');
      // A fetch that brings the same set back keeps what is cached.
      const current = bearer(await sign(second, { sub: 'c' }));
      const kept = await verifier.identify(current);
      assert.equal(await verifier.identify(bearer(await sign(second, { sub: 'd' }, { kid: 'made-up' }))), 'unknown_key');
      assert.equal(jwks.fetches, 4, 'the made-up kid fetched the same set again');
      assert.equal(await verifier.identify(current), kept, 'still cached');
    } finally {
      await jwks.close();
    }
  });
});
