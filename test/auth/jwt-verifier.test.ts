// The verifier without a network: the token found in each place it may be
// sent, the plan and tenant read from their claims (the plan is handed on as
// identity.plan for the plans to use), duplicates refused, and the cache of
// verified tokens (a hit is the very identity the first verification made).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { JwtAuthConfig } from '../../src/auth/jwt-config.js';
import { JwtVerifier } from '../../src/auth/jwt-verifier.js';
import { AUDIENCE, ISSUER, sign } from '../helpers/jwt-support.js';

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
  cache: { maxEntries: 100, maxAgeSeconds: 60 },
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

  describe('verified tokens cache', () => {
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    /** A verifier whose cache reads `clock.now` (jose keeps the real clock for exp and nbf). */
    const cached = (cache: JwtAuthConfig['cache'], tolerance = 0) => {
      const clock = { now: Date.now() };
      return { clock, verifier: new JwtVerifier(config({ cache, clockToleranceSeconds: tolerance }), () => clock.now) };
    };

    it('a token seen again is answered from the cache, by its hash: the entry never holds the token', async () => {
      const { verifier } = cached({ maxEntries: 10, maxAgeSeconds: 60 });
      const token = await sign(hs, { sub: 'u1' });
      const first = await verifier.identify(bearer(token));
      assert.ok(typeof first === 'object');
      assert.equal(await verifier.identify(bearer(token)), first, 'the cached identity itself');
      assert.equal(verifier.verified?.size, 1);
      const other = await verifier.identify(bearer(await sign(hs, { sub: 'u2' })));
      assert.ok(typeof other === 'object' && other !== first && other.claims.sub === 'u2');
    });

    it('an entry ends at exp (plus the clock tolerance) or maxAgeSeconds after it was verified, whichever is first', async () => {
      const { clock, verifier } = cached({ maxEntries: 10, maxAgeSeconds: 60 }, 5);
      const soon = await sign(hs, { sub: 'u1' }, { expiresIn: 20 });
      const first = await verifier.identify(bearer(soon));
      clock.now += 24_000;
      assert.equal(await verifier.identify(bearer(soon)), first, 'inside exp + tolerance');
      clock.now += 2_000;
      assert.notEqual(await verifier.identify(bearer(soon)), first, 'past exp + tolerance: verified again');

      const late = await sign(hs, { sub: 'u2' }, { expiresIn: 3_600 });
      const kept = await verifier.identify(bearer(late));
      clock.now += 59_000;
      assert.equal(await verifier.identify(bearer(late)), kept, 'inside maxAgeSeconds');
      clock.now += 2_000;
      assert.notEqual(await verifier.identify(bearer(late)), kept, 'past maxAgeSeconds: verified again');
    });

    it('never caches a refusal, holds at most maxEntries (least recently used out), and maxEntries 0 turns it off', async () => {
      const { verifier } = cached({ maxEntries: 2, maxAgeSeconds: 60 });
      assert.equal(await verifier.identify(bearer(await sign(hs, { sub: 'u1' }, { expiresIn: -60 }))), 'expired');
      assert.equal(await verifier.identify(bearer(await sign({ secret: new TextEncoder().encode('x'.repeat(40)), alg: 'HS256' }, { sub: 'u1' }))), 'bad_signature');
      assert.equal(verifier.verified?.size, 0);
      const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((sub) => sign(hs, { sub })));
      const first = await verifier.identify(bearer(a!));
      await verifier.identify(bearer(b!));
      await verifier.identify(bearer(c!));
      assert.equal(verifier.verified?.size, 2);
      assert.notEqual(await verifier.identify(bearer(a!)), first, 'a, the least recently used, was dropped');

      const off = new JwtVerifier(config({ cache: { maxEntries: 0, maxAgeSeconds: 60 } }));
      assert.equal(off.verified, undefined);
      const once = await off.identify(bearer(a!));
      assert.ok(typeof once === 'object');
      assert.notEqual(await off.identify(bearer(a!)), once);
    });
  });
});
