// `sluice explain` on routes with `auth: jwt`: the sample's token verified by
// the gateway's own JwtVerifier (a local JWK set and a secret file in a temp
// dir, tokens signed with jose: no socket), one test per refusal reason and
// skip reason, the tenant and plan claims, the forwarded claims by name, a
// claim-keyed limit's hash and bucket, and the token never in the answer.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { JwtAuthConfig } from '../../src/auth/jwt-config.js';
import { JwtVerifier } from '../../src/auth/jwt-verifier.js';
import { VerifierPool } from '../../src/auth/verifier-pool.js';
import { headerBucketId } from '../../src/core/ids.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { type ExplainContext, type Explanation, explainRequest, explainSample } from '../../src/explain/explain.js';
import { renderText } from '../../src/explain/render.js';
import { parseSample, type SampleFields } from '../../src/explain/sample.js';
import { resolversFor } from '../../src/rules/resolvers.js';
import { AUDIENCE, ISSUER, sign, type TestKey, testKey, unsignedToken } from '../helpers/jwt-support.js';

const SECRET = 'explain-jwt-secret-0123456789abcdef';
const KEY = 'key-shop-a-0001';

const yamlOf = (dir: string) => `
routes:
  - id: orders
    path: /orders
    upstream: http://127.0.0.1:9
    auth: { kind: jwt, algorithms: [ES256], jwksFile: ${JSON.stringify(join(dir, 'jwks.json'))}, issuer: ${ISSUER}, audience: ${AUDIENCE}, tenantClaim: org, planClaim: plan, forwardClaims: { sub: X-User-Id, email: X-User-Email }, maxTokenBytes: 2048 }
    limits:
      - { id: per-user, key: { claim: sub }, rule: { policy: fixed_window, limit: 5, windowMs: 60000 } }
      - { id: per-tenant, key: tenant, rule: { policy: token_bucket, capacity: 10, refillPerSecond: 1 } }
  - id: reports
    path: /reports
    upstream: http://127.0.0.1:9
    auth: { kind: jwt, algorithms: [HS256], secretFile: ${JSON.stringify(join(dir, 'secret'))}, token: { cookie: session } }
    limits:
      - { id: reports-tenant, key: tenant, rule: { policy: token_bucket, capacity: 10, refillPerSecond: 1 } }
tenants:
  keys:
    - { key: ${KEY}, tenant: shop-a }
defaultRule: { policy: token_bucket, capacity: 20, refillPerSecond: 2 }
`;

it('a claim-keyed global limit on a route without auth: skipped as route_without_auth, the request goes on', async () => {
  const config = parseConfig(
    `
globalLimits:
  - { id: per-sub, key: { claim: sub }, rule: { policy: token_bucket, capacity: 5, refillPerSecond: 1 } }
routes:
  - { id: open, path: /open, upstream: http://127.0.0.1:9 }
tenants:
  keys: [{ key: ${KEY}, tenant: shop-a }]
defaultRule: { policy: token_bucket, capacity: 20, refillPerSecond: 2 }
`,
    { source: 'test.yaml', env: {} },
  );
  const resolvers = resolversFor(config);
  const out = await explainSample({ config, rules: resolvers.rules, tenants: resolvers.tenants, ruleStore: false }, parseSample({ path: '/open', header: [`X-Api-Key: ${KEY}`], ip: '192.0.2.1' }));
  assert.equal(out.outcome.status, 200, out.outcome.summary);
  assert.equal(out.auth, undefined);
  assert.deepEqual(
    out.limits.map((entry) => [entry.id, entry.status, entry.reason]),
    [
      ['open', 'applies', undefined],
      ['per-sub', 'skipped', 'route_without_auth'],
    ],
  );
});

describe('explain on a route with auth: jwt', () => {
  let dir: string;
  let key: TestKey;
  let other: TestKey;
  let context: ExplainContext;
  const secret = { secret: new TextEncoder().encode(SECRET), alg: 'HS256' };

  before(async () => {
    key = await testKey('ES256', 'ec-1');
    other = await testKey('ES256', 'ec-2');
    dir = mkdtempSync(join(tmpdir(), 'sluice-explain-jwt-'));
    writeFileSync(join(dir, 'jwks.json'), JSON.stringify({ keys: [key.publicJwk] }));
    writeFileSync(join(dir, 'secret'), `${SECRET}\n`);
    const config = parseConfig(yamlOf(dir), { source: 'test.yaml', env: {} });
    const resolvers = resolversFor(config);
    context = { config, rules: resolvers.rules, tenants: resolvers.tenants, ruleStore: false };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const explain = (fields: SampleFields, ctx = context): Promise<Explanation> => explainSample(ctx, parseSample({ ip: '192.0.2.1', ...fields }));
  const bearer = (token: string) => `Authorization: Bearer ${token}`;
  const limit = (out: Explanation, id: string) => out.limits.find((entry) => entry.id === id)!;

  it('a verified token: tenant and plan from their claims, forwarded claims by name, the claim-keyed bucket by hash', async () => {
    const token = await sign(key, { sub: 'user-42', org: 'shop-b', plan: 'gold', email: 'someone@example.com' });
    const out = await explain({ path: '/orders', header: [bearer(token)] });
    assert.equal(out.outcome.status, 200, out.outcome.summary);
    assert.equal(out.auth?.outcome, 'verified');
    assert.deepEqual(out.auth?.source, { kind: 'bearer', name: 'authorization' });
    assert.equal(out.auth?.tenantFrom, 'token');
    assert.equal(out.auth?.tenant, 'shop-b');
    assert.equal(out.identity.tenant, 'shop-b');
    assert.equal(out.identity.keySha256, undefined, 'the API key is not read when the token names the tenant');
    assert.equal(out.auth?.plan, 'gold');
    assert.deepEqual(out.auth?.forwarded, [
      { claim: 'sub', header: 'x-user-id', present: true },
      { claim: 'email', header: 'x-user-email', present: true },
    ]);
    const perUser = limit(out, 'per-user');
    assert.equal(perUser.status, 'applies');
    assert.deepEqual(perUser.key, { claimHash: headerBucketId('user-42') });
    assert.equal(perUser.bucket?.tag, headerBucketId('user-42'));
    assert.equal(perUser.bucket?.name, 'per-user');
    assert.ok(perUser.bucket?.redisKey.startsWith(`rl:{${headerBucketId('user-42')}}`), perUser.bucket?.redisKey);
    assert.deepEqual(limit(out, 'per-tenant').key, { tenant: 'shop-b' });
    const json = JSON.stringify(out);
    const text = renderText(out);
    for (const secretPart of [token, token.split('.')[2]!, 'user-42', 'someone@example.com']) {
      assert.ok(!json.includes(secretPart), 'neither the token nor a claim value is in the answer');
      assert.ok(!text.includes(secretPart), 'neither the token nor a claim value is in the text');
    }
    assert.match(text, /JWT required \(Authorization: Bearer\): verified/);
    assert.match(text, /tenant shop-b \(from claim org\)/);
    assert.match(text, /plan gold \(from claim plan\)/);
    assert.match(text, /claim sub -> header x-user-id upstream/);
  });

  it('a forwarded claim the token lacks is named as not set', async () => {
    const out = await explain({ path: '/orders', header: [bearer(await sign(key, { sub: 'u1', org: 'shop-b' }))] });
    assert.deepEqual(out.auth?.forwarded[1], { claim: 'email', header: 'x-user-email', present: false });
    assert.equal(out.auth?.plan, undefined);
  });

  const refusals: [reason: string, make: () => Promise<string[]>][] = [
    ['missing', async () => []],
    ['malformed', async () => [bearer('not-a.jwt')]],
    ['too_large', async () => [bearer('a'.repeat(3000))]],
    ['expired', async () => [bearer(await sign(key, { sub: 'u1', org: 'shop-b' }, { expiresIn: -600 }))]],
    ['not_yet_valid', async () => [bearer(await sign(key, { sub: 'u1', org: 'shop-b' }, { notBefore: 600 }))]],
    ['bad_issuer', async () => [bearer(await sign(key, { sub: 'u1', org: 'shop-b' }, { issuer: 'https://evil.test/' }))]],
    ['bad_audience', async () => [bearer(await sign(key, { sub: 'u1', org: 'shop-b' }, { audience: 'other-api' }))]],
    ['bad_signature', async () => [bearer(await sign(other, { sub: 'u1', org: 'shop-b' }, { kid: 'ec-1' }))]],
    ['unknown_key', async () => [bearer(await sign(other, { sub: 'u1', org: 'shop-b' }))]],
    ['bad_algorithm', async () => [bearer(unsignedToken({ sub: 'u1', org: 'shop-b' }, 'ec-1'))]],
    ['bad_claim', async () => [bearer(await sign(key, { sub: 'u1' }))]],
  ];
  for (const [reason, make] of refusals) {
    it(`a token refused as ${reason}: 401 invalid_token, the check named, every limit skipped`, async () => {
      const out = await explain({ path: '/orders', header: await make() });
      assert.equal(out.outcome.status, 401);
      assert.equal(out.outcome.error, 'invalid_token');
      assert.equal(out.auth?.outcome, 'refused');
      assert.equal(out.auth?.reason, reason);
      assert.ok(out.outcome.summary.includes(reason), out.outcome.summary);
      assert.deepEqual(
        out.limits.map((entry) => [entry.id, entry.status, entry.reason]),
        [
          ['per-user', 'skipped', 'invalid_token'],
          ['per-tenant', 'skipped', 'invalid_token'],
        ],
      );
      assert.equal(out.identity.tenant, undefined);
      assert.match(renderText(out), new RegExp(`JWT required \\(Authorization: Bearer\\): refused \\(${reason}: `));
    });
  }

  it('a key set that cannot be fetched: 503 auth_unavailable, limits skipped auth_unavailable', async () => {
    // The reason comes from the verifier (jwks_unavailable); a stub stands for a jwksUrl that does not answer, without a socket.
    const auth = context.config.routes[0]!.auth!;
    const down = Object.assign(Object.create(JwtVerifier.prototype) as JwtVerifier, { config: auth, identify: async () => 'jwks_unavailable' as const });
    const out = await explain({ path: '/orders', header: [bearer('a.b.c')] }, { ...context, verifiers: { of: () => down } });
    assert.equal(out.outcome.status, 503);
    assert.equal(out.outcome.error, 'auth_unavailable');
    assert.equal(out.auth?.reason, 'jwks_unavailable');
    assert.deepEqual(
      out.limits.map((entry) => entry.reason),
      ['auth_unavailable', 'auth_unavailable'],
    );
  });

  it('a verified token without the claim a limit is keyed by: 401 missing_limit_claim', async () => {
    // sub is absent: the token verifies, the per-user limit cannot be keyed.
    const out = await explain({ path: '/orders', header: [bearer(await sign(key, { org: 'shop-b' }))] });
    assert.equal(out.auth?.outcome, 'verified');
    assert.equal(out.outcome.status, 401);
    assert.equal(out.outcome.error, 'missing_limit_claim');
    assert.equal(limit(out, 'per-user').reason, 'missing_limit_claim');
    assert.equal(limit(out, 'per-tenant').reason, 'request_refused');
  });

  it('a route without tenantClaim: the cookie token verified, then the API key names the tenant', async () => {
    const token = await sign(secret, { sub: 'u1' });
    const ok = await explain({ path: '/reports', header: [`Cookie: theme=dark; session=${token}`, `X-Api-Key: ${KEY}`] });
    assert.deepEqual(ok.auth?.source, { kind: 'cookie', name: 'session' });
    assert.equal(ok.auth?.outcome, 'verified');
    assert.equal(ok.auth?.tenantFrom, 'api-key');
    assert.equal(ok.identity.tenant, 'shop-a');
    assert.equal(ok.outcome.status, 200);
    assert.match(renderText(ok), /JWT required \(cookie session\): verified/);
    const noKey = await explain({ path: '/reports', header: [`Cookie: session=${token}`] });
    assert.equal(noKey.outcome.error, 'missing_api_key');
    assert.equal(limit(noKey, 'reports-tenant').reason, 'missing_api_key');
    const noToken = await explain({ path: '/reports', header: [`X-Api-Key: ${KEY}`] });
    assert.equal(noToken.auth?.reason, 'missing', 'the token is checked before the API key');
    assert.equal(noToken.identity.keySha256, undefined);
    assert.ok(!renderText(noToken).includes('API key'), 'the text does not speak of a key the gateway never reads');
  });

  it("the gateway's own verifiers are used when given", async () => {
    const pool = new VerifierPool();
    const asked: JwtAuthConfig[] = [];
    const verifiers = {
      of: (auth: JwtAuthConfig | undefined) => {
        if (auth !== undefined) asked.push(auth);
        return pool.of(auth);
      },
    };
    const out = await explain({ path: '/orders', header: [bearer(await sign(key, { sub: 'u1', org: 'shop-b' }))] }, { ...context, verifiers });
    assert.equal(out.auth?.outcome, 'verified');
    assert.deepEqual(asked, [context.config.routes[0]!.auth]);
  });

  it('explainRequest without the verifier answer stops at the token (never guesses it verified)', () => {
    const out = explainRequest(context, parseSample({ path: '/orders', ip: '192.0.2.1' }));
    assert.equal(out.auth?.outcome, 'unverified');
    assert.equal(out.outcome.status, 401);
    assert.ok(out.limits.every((entry) => entry.reason === 'invalid_token'));
  });
});
