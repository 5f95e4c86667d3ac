// `sluice explain --config FILE`: text by default, `--format json` the
// structure, and a bad argument named with exit code 2.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/explain-command.js';
import type { CliIo } from '../../src/cli/cli-io.js';

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
});
