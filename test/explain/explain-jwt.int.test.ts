// GET /explain and `sluice explain` on a JWT route (a JWK set served on
// loopback, a real redis-server): the sample's token is verified by the
// gateway's own verifier (its cached key set: no second fetch), the
// claim-keyed bucket explain names is the one a real request with that token
// charges, and the token is never in the answer. With --config, a jwksUrl that
// does not answer is auth_unavailable within auth.jwks.timeoutMs.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { run } from '../../src/cli/explain-command.js';
import { headerBucketId } from '../../src/core/ids.js';
import type { Explanation, LimitExplanation } from '../../src/explain/explain.js';
import { type JwksServer, startJwks } from '../helpers/jwks-server.js';
import { AUDIENCE, ISSUER, sign, type TestKey, testKey } from '../helpers/jwt-support.js';
import { call, startGateway, startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';

const TOKEN = 'explain-jwt-admin-token-0123456789';

const yamlOf = (jwksUrl: string, upstreamUrl: string) => `
routes:
  - id: orders
    path: /orders
    upstream: ${upstreamUrl}
    auth: { kind: jwt, algorithms: [ES256], jwksUrl: ${jwksUrl}, jwks: { timeoutMs: 300 }, issuer: ${ISSUER}, audience: ${AUDIENCE}, tenantClaim: org, forwardClaims: { sub: X-User-Id } }
    limits:
      - { id: per-user, key: { claim: sub }, rule: { policy: fixed_window, limit: 4, windowMs: 600000 } }
      - { id: per-tenant, key: tenant, rule: { policy: token_bucket, capacity: 5, refillPerSecond: 0.001 } }
`;

function capture() {
  const io = {
    stdout: '',
    env: {},
    out: (text: string) => {
      io.stdout += text;
    },
    err: (text: string) => assert.fail(text),
  };
  return io;
}

describe('explain on a JWT route, through the admin API and a real request', () => {
  let redis: RedisServer;
  let upstream: TestUpstream;
  let jwks: JwksServer;
  let app: RunningSluice;
  let dir: string;
  let key: TestKey;
  let token: string;
  const admin = (path: string) => call(`${app.adminUrl}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const explain = async (headers: string[]): Promise<Explanation> => {
    const params = new URLSearchParams({ path: '/orders', ip: '127.0.0.1' });
    for (const header of headers) params.append('header', header);
    const reply = await admin(`/explain?${params}`);
    assert.equal(reply.status, 200, reply.body);
    assert.ok(!reply.body.includes(token), 'the token is never echoed');
    assert.ok(!reply.body.includes('user-7'), 'nor a claim value');
    return JSON.parse(reply.body) as Explanation;
  };
  const remaining = (entry: LimitExplanation) => (entry.state as { remaining: number }).remaining;

  before(async () => {
    redis = await startRedis();
    upstream = await startUpstream();
    key = await testKey('ES256', 'ec-1');
    jwks = await startJwks([key.publicJwk]);
    dir = mkdtempSync(join(tmpdir(), 'sluice-explain-jwt-'));
    const env = { UP: upstream.url, SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_DECISION_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: dir };
    app = await startGateway(`${yamlOf(jwks.url, upstream.url)}store: { type: redis, url: ${redis.url}, deadlineMs: 2000 }\n`, env, { ruleStore: true, admin: true });
    token = await sign(key, { sub: 'user-7', org: 'shop-j' });
  });
  after(async () => {
    await app.close();
    await upstream.close();
    await jwks.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("verifies with the gateway's verifier, and names the claim bucket a real request charges", async () => {
    const first = await explain([`Authorization: Bearer ${token}`]);
    assert.equal(first.auth?.outcome, 'verified');
    assert.equal(first.identity.tenant, 'shop-j');
    const perUser = first.limits.find((entry) => entry.id === 'per-user')!;
    assert.deepEqual(perUser.key, { claimHash: headerBucketId('user-7') });
    assert.deepEqual(first.limits.map(remaining), [4, 5]);
    assert.equal(jwks.fetches, 1, 'explain fetched the key set once');
    const sent = await call(`${app.url}/orders`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(sent.status, 200, sent.body);
    assert.equal(jwks.fetches, 1, "the gateway's request met the key set explain's verifier cached: the same verifier");
    const after = await explain([`Authorization: Bearer ${token}`]);
    assert.deepEqual(after.limits.map(remaining), [3, 4], 'each bucket explain names is the one the gateway charged');
    const client = redis.client();
    try {
      for (const entry of after.limits) {
        const { redisKey, field } = entry.bucket!;
        assert.equal(field === undefined ? await client.exists(redisKey) : await client.hexists(redisKey, field), 1, `${entry.id}: ${redisKey} ${field ?? ''}`);
      }
    } finally {
      client.disconnect();
    }
  });

  it('a refused token: the reason, every limit skipped, as the gateway answers it', async () => {
    const expired = await sign(key, { sub: 'user-7', org: 'shop-j' }, { expiresIn: -600 });
    const out = await explain([`Authorization: Bearer ${expired}`]);
    assert.equal(out.outcome.status, 401);
    assert.equal(out.auth?.reason, 'expired');
    assert.deepEqual(out.limits.map((entry) => entry.reason), ['invalid_token', 'invalid_token']);
    const sent = await call(`${app.url}/orders`, { headers: { authorization: `Bearer ${expired}` } });
    assert.equal(sent.status, 401);
    assert.equal(JSON.parse(sent.body).reason, 'expired');
  });

  it('sluice explain --admin: the text names the outcome and the forwarded header, never the token', async () => {
    const io = capture();
    assert.equal(await run(['--admin', app.adminUrl!, '--token', TOKEN, '--path', '/orders', '--header', `Authorization: Bearer ${token}`, '--ip', '127.0.0.1'], io), 0);
    assert.match(io.stdout, /JWT required \(Authorization: Bearer\): verified/);
    assert.match(io.stdout, /claim sub -> header x-user-id upstream/);
    assert.match(io.stdout, /limit per-user: applies, counted per value of claim sub \(hashed: ~h\./);
    assert.ok(!io.stdout.includes(token) && !io.stdout.includes('user-7'));
  });

  it('sluice explain --config: the verifier built from the config fetches the jwksUrl; one that stalls is auth_unavailable in time', async () => {
    const file = join(dir, 'cli.yaml');
    writeFileSync(file, yamlOf(jwks.url, upstream.url));
    const io = capture();
    assert.equal(await run(['--config', file, '--format', 'json', '--path', '/orders', '--header', `Authorization: Bearer ${token}`, '--ip', '127.0.0.1'], io), 0);
    const out = JSON.parse(io.stdout) as Explanation;
    assert.equal(out.auth?.outcome, 'verified');
    assert.equal(out.limits[0]!.key?.claimHash, headerBucketId('user-7'));
    const stalled = await startJwks([key.publicJwk]);
    stalled.stall = true;
    try {
      writeFileSync(file, yamlOf(stalled.url, upstream.url));
      const slow = capture();
      const started = Date.now();
      assert.equal(await run(['--config', file, '--format', 'json', '--path', '/orders', '--header', `Authorization: Bearer ${token}`, '--ip', '127.0.0.1'], slow), 0);
      assert.ok(Date.now() - started < 3_000, 'bounded by auth.jwks.timeoutMs');
      const down = JSON.parse(slow.stdout) as Explanation;
      assert.equal(down.outcome.status, 503);
      assert.equal(down.auth?.reason, 'jwks_unavailable');
      assert.deepEqual(down.limits.map((entry) => entry.reason), ['auth_unavailable', 'auth_unavailable']);
    } finally {
      await stalled.close();
    }
  });
});
