// `sluice explain --config FILE`: text by default, `--format json` the
// structure, and a bad argument named with exit code 2; on a JWT route
// (secretFile: no socket) the token's outcome, never the token.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { run } from '../../src/cli/explain-command.js';
import type { CliIo } from '../../src/cli/cli-io.js';
import { headerBucketId } from '../../src/core/ids.js';

const YAML = `
routes:
  - id: orders
    path: /orders/*
    methods: [GET, POST]
    upstream: http://127.0.0.1:8090
    limits:
      - { id: per-tenant, key: tenant }
      - { id: per-ip, key: ip, rule: { policy: token_bucket, capacity: 50, refillPerSecond: 5 } }
tenants:
  keys: [{ key: demo-key-shop-a, tenant: shop-a }]
defaultRule: { policy: token_bucket, capacity: 20, refillPerSecond: 2 }
`;

function capture(): CliIo & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    env: {},
    out: (text: string) => {
      io.stdout += text;
    },
    err: (text: string) => {
      io.stderr += text;
    },
  };
  return io;
}

describe('sluice explain --config', () => {
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-explain-cli-'));
    file = join(dir, 'sluice.yaml');
    writeFileSync(file, YAML);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const ARGS = () => ['--config', file, '--path', '/orders/42', '--header', 'X-Api-Key: demo-key-shop-a', '--ip', '192.0.2.7'];

  it('prints readable text by default', async () => {
    const io = capture();
    assert.equal(await run(ARGS(), io), 0, io.stderr);
    assert.match(io.stdout, /^GET \/orders\/42, client 192\.0\.2\.7\n=> 200: decided by 2 limits/);
    assert.match(io.stdout, /\+ orders: GET\|POST \/orders\/\* matches/);
    assert.match(io.stdout, /tenant shop-a/);
    assert.match(io.stdout, /limit per-tenant: applies, counted per tenant \(shop-a\)\n {6}rule {3}token_bucket capacity=20 refillPerSecond=2 {3}from default-rule\n {6}bucket rl:\{shop-a\} field per-tenant/);
    assert.match(io.stdout, /bucket rl:\{~ip\.192\.0\.2\.7\} field per-ip/);
    assert.ok(!io.stdout.includes('demo-key-shop-a'), 'the key is never printed');
  });

  it('prints the structure with --format json', async () => {
    const io = capture();
    assert.equal(await run([...ARGS(), '--format', 'json'], io), 0, io.stderr);
    const out = JSON.parse(io.stdout);
    assert.equal(out.route, 'orders');
    assert.deepEqual(out.limits.map((limit: { bucket: { redisKey: string } }) => limit.bucket.redisKey), ['rl:{shop-a}', 'rl:{~ip.192.0.2.7}']);
  });

  for (const [args, message] of [
    [['--path', 'orders'], /^--path must start with \//],
    [['--path', '/x', '--ip', 'nope'], /^--ip must be an IPv4 or IPv6 address/],
    [['--path', '/x', '--header', 'nocolon'], /^--header #1 must be 'Name: value'/],
    [['--path', '/x', '--format', 'yaml'], /^--format must be text or json/],
    [['--pth', '/x'], /^Unknown option '--pth'\n/],
    [['--path', '/x', '--admin', 'http://127.0.0.1:1'], /^give --config FILE or --admin URL, not both/],
  ] as [string[], RegExp][]) {
    it(`names the bad argument: ${args.join(' ')}`, async () => {
      const io = capture();
      assert.equal(await run(['--config', file, ...args], io), 2);
      assert.match(io.stderr, message);
      assert.equal(io.stdout, '');
    });
  }

  // A generated token is base64url: one in 64 starts with '-', one in 4096 with '--'.
  for (const token of ['-dashToken', '--twoDashes', '-']) {
    it(`--token ${token} is taken as the token, not read as an option`, async () => {
      const io = capture();
      assert.equal(await run(['--admin', 'http://127.0.0.1:1', '--token', token, '--path', '/x'], io), 1);
      assert.doesNotMatch(io.stderr, /ambiguous|usage:/);
      assert.match(io.stderr, /^error: /);
    });
  }
});

describe('sluice explain --config on a JWT route', () => {
  const SECRET = 'cli-explain-secret-0123456789abcdefgh';
  let dir: string;
  let file: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-explain-cli-jwt-'));
    file = join(dir, 'sluice.yaml');
    writeFileSync(join(dir, 'secret'), SECRET);
    writeFileSync(
      file,
      `
routes:
  - id: orders
    path: /orders
    upstream: http://127.0.0.1:8090
    auth: { kind: jwt, algorithms: [HS256], secretFile: secret, tenantClaim: org, forwardClaims: { sub: X-User-Id } }
    limits:
      - { id: per-user, key: { claim: sub }, rule: { policy: token_bucket, capacity: 50, refillPerSecond: 5 } }
`,
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const tokenOf = (claims: Record<string, unknown>, expiresIn = 300) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(now + expiresIn).sign(new TextEncoder().encode(SECRET));
  };
  const args = (token: string) => ['--config', file, '--path', '/orders', '--header', `Authorization: Bearer ${token}`, '--ip', '192.0.2.7'];

  it('text: the token verified, the tenant from its claim, the forwarded header, the claim bucket by hash', async () => {
    const token = await tokenOf({ sub: 'user-9', org: 'shop-c' });
    const io = capture();
    assert.equal(await run(args(token), io), 0, io.stderr);
    assert.match(io.stdout, /=> 200: decided by 1 limit/);
    assert.match(io.stdout, /identity:\n {2}JWT required \(Authorization: Bearer\): verified\n {2}claim sub -> header x-user-id upstream\n {2}tenant shop-c \(from claim org\)/);
    assert.match(io.stdout, new RegExp(`limit per-user: applies, counted per value of claim sub \\(hashed: ${headerBucketId('user-9').replace('.', '\\.')}\\)`));
    assert.ok(!io.stdout.includes(token) && !io.stdout.includes('user-9'), 'neither the token nor the claim value is printed');
  });

  it('json: a refused token names its reason; the limits are skipped invalid_token', async () => {
    const token = await tokenOf({ sub: 'user-9', org: 'shop-c' }, -600);
    const io = capture();
    assert.equal(await run([...args(token), '--format', 'json'], io), 0, io.stderr);
    const out = JSON.parse(io.stdout);
    assert.deepEqual(out.outcome, { status: 401, error: 'invalid_token', summary: out.outcome.summary, decided: false });
    assert.deepEqual(out.auth, { source: { kind: 'bearer', name: 'authorization' }, outcome: 'refused', tenantFrom: 'token', tenantClaim: 'org', forwarded: [{ claim: 'sub', header: 'x-user-id', present: false }], reason: 'expired', check: 'the token has expired (exp)' });
    assert.deepEqual(out.limits.map((limit: { reason: string }) => limit.reason), ['invalid_token']);
    assert.ok(!io.stdout.includes(token));
  });
});
