import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CliIo } from '../../src/cli/cli-io.js';
import { run as keys } from '../../src/cli/keys-command.js';
import { run as migrateCli } from '../../src/cli/migrate.js';
import { run as rules } from '../../src/cli/rules-command.js';
import { type AdminFixture, startAdminFixture, TOKEN } from '../helpers/admin-fixture.js';

let f: AdminFixture;
let dir: string;
before(async () => {
  f = await startAdminFixture();
  dir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
});
after(async () => {
  await f.close();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(command: typeof rules, argv: string[], env: NodeJS.ProcessEnv = { SLUICE_ADMIN_TOKEN: TOKEN }, admin = f.admin.url) {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (t) => void out.push(t), err: (t) => void err.push(t), env };
  const code = await command([...argv, '--admin', admin], io);
  return { code, out: out.join(''), err: err.join('') };
}

describe('sluice rules', () => {
  it('sets with options or JSON, gets, lists and deletes', async () => {
    assert.equal((await cli(rules, ['set', 'shop-a', 'orders', '--policy', 'token_bucket', '--capacity', '200', '--refill-per-second', '100', '--shadow'])).code, 0);
    assert.deepEqual((await f.store.getRule('shop-a', 'orders'))?.rule, { policy: 'token_bucket', capacity: 200, refillPerSecond: 100, shadow: true });
    assert.equal((await cli(rules, ['set', 'shop-a', '*', '{"policy":"fixed_window","limit":5,"windowMs":1000}'])).code, 0);
    const got = await cli(rules, ['get', 'shop-a', 'orders']);
    assert.equal(JSON.parse(got.out).rule.capacity, 200);
    const listed = await cli(rules, ['list', '--tenant', 'shop-a']);
    assert.equal(listed.out.trim().split('\n').length, 2);
    assert.equal((await cli(rules, ['delete', 'shop-a', '*'])).code, 0);
    assert.equal((await cli(rules, ['delete', 'shop-a', 'orders'])).code, 0);
  });

  it('reports API errors naming the field, and usage errors with code 2', async () => {
    const bad = await cli(rules, ['set', 'shop-a', 'orders', '--policy', 'token_bucket', '--capacity', '0', '--refill-per-second', '1']);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /400 body\.capacity: must be at least 1 \(ERR_RULE_INVALID\)/);
    assert.equal((await cli(rules, ['get', 'shop-a'])).code, 2);
    assert.equal((await cli(rules, ['frobnicate'])).code, 2);
    const noToken = await cli(rules, ['list'], {});
    assert.equal(noToken.code, 1);
    assert.match(noToken.err, /SLUICE_ADMIN_TOKEN is not set.*\(ERR_UNAUTHORIZED\)/);
    const noAdmin = await cli(rules, ['list'], { SLUICE_ADMIN_TOKEN: TOKEN }, 'http://127.0.0.1:1');
    assert.equal(noAdmin.code, 1);
    assert.match(noAdmin.err, /cannot reach the admin API at http:\/\/127\.0\.0\.1:1.*\(ERR_ADMIN_UNREACHABLE\)/);
    assert.deepEqual(await f.store.listRules(), []);
  });

  it('exports to the config file shape and imports it back (all validated before any write)', async () => {
    await f.store.putRule('shop-a', 'orders', { policy: 'token_bucket', capacity: 200, refillPerSecond: 100 });
    await f.store.putRule('*', 'search', { policy: 'sliding_window_counter', limit: 100, windowMs: 60000, regionShares: { eu: 0.7, us: 0.3 } });
    const file = join(dir, 'rules.yaml');
    assert.equal((await cli(rules, ['export', file])).code, 0);
    const text = readFileSync(file, 'utf8');
    assert.match(text, /^rules:\n {2}- \{ tenant: "\*", route: search, policy: sliding_window_counter/m);
    assert.match(text, /- \{ tenant: shop-a, route: orders, policy: token_bucket, capacity: 200, refillPerSecond: 100 \}/);

    const before = await f.store.listRules();
    await f.store.deleteRule('shop-a', 'orders');
    await f.store.putRule('shop-z', 'stale', { policy: 'gcra', capacity: 1, refillPerSecond: 1 });
    assert.equal((await cli(rules, ['import', file, '--prune'])).code, 0);
    assert.deepEqual((await f.store.listRules()).map((r) => [r.tenant, r.route, r.rule]), before.map((r) => [r.tenant, r.route, r.rule]));

    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'rules:\n  - { tenant: shop-b, route: a, policy: token_bucket, capacity: 1, refillPerSecond: 1 }\n  - { tenant: shop-b, route: b, policy: token_bucket, capacity: -1, refillPerSecond: 1 }\n');
    const result = await cli(rules, ['import', broken]);
    assert.equal(result.code, 1);
    assert.match(result.err, /rules\[1\]\.capacity/);
    assert.deepEqual(await f.store.listRules({ tenant: 'shop-b' }), [], 'nothing of a bad file is written');
  });
});

describe('sluice keys', () => {
  it('creates (printing the key once), lists and revokes', async () => {
    const created = await cli(keys, ['create', 'shop-k', '--json']);
    assert.equal(created.code, 0);
    const { id, key } = JSON.parse(created.out) as { id: string; key: string };
    const listed = await cli(keys, ['list', '--tenant', 'shop-k']);
    assert.match(listed.out, new RegExp(`^${id}\\tshop-k\\t.*active$`, 'm'));
    assert.equal(listed.out.includes(key), false);
    const revoked = await cli(keys, ['revoke', id]);
    assert.equal(revoked.code, 0);
    assert.match((await cli(keys, ['list'])).out, /revoked/);
    assert.equal((await cli(keys, ['revoke', 'key_unknown'])).code, 1);
    assert.equal((await cli(keys, ['create'])).code, 2);
  });
});

describe('sluice migrate', () => {
  it('needs SLUICE_DATABASE_URL, and says which database it could not reach', async () => {
    const io = (env: NodeJS.ProcessEnv) => {
      const lines: string[] = [];
      return { lines, io: { out: (t: string) => void lines.push(t), err: (t: string) => void lines.push(t), env } };
    };
    const missing = io({});
    assert.equal(await migrateCli([], missing.io), 2);
    assert.match(missing.lines.join(''), /SLUICE_DATABASE_URL is not set/);
    const down = io({ SLUICE_DATABASE_URL: 'postgres://u:secret@127.0.0.1:1/db' });
    assert.equal(await migrateCli([], down.io), 1);
    assert.match(down.lines.join(''), /127\.0\.0\.1:1\/db/);
    assert.equal(down.lines.join('').includes('secret'), false);
  });
});
