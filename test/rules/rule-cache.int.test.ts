import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Rule } from '../../src/policies/rule.js';
import { EmbeddedRuleStore } from '../../src/rules/embedded/store.js';
import { silentLogger } from '../../src/rules/logger.js';
import { PostgresRuleStore } from '../../src/rules/postgres/store.js';
import { RuleCache } from '../../src/rules/cache/rule-cache.js';
import { readSnapshot } from '../../src/rules/cache/snapshot-file.js';
import { eventually } from '../helpers/poll.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cache-'));
  dirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const defaultRule: Rule = { policy: 'token_bucket', capacity: 20, refillPerSecond: 10 };
const tb = (capacity: number): Rule => ({ policy: 'token_bucket', capacity, refillPerSecond: 1 });

describe('rule cache', () => {
  it('resolves tenant × route, then tenant × any, then any × route, then any × any, then the default', async () => {
    const store = new EmbeddedRuleStore({ dataDir: tempDir() });
    const cache = new RuleCache({ store, defaultRule, logger: silentLogger });
    await cache.start();
    assert.deepEqual(cache.resolve('shop-a', 'orders'), { rule: defaultRule, match: 'default', version: cache.resolve('x', 'y').version });
    await store.putRule('shop-a', 'orders', tb(1));
    await store.putRule('shop-a', '*', tb(2));
    await store.putRule('*', 'orders', tb(3));
    await eventually(() => assert.equal(cache.status().rules, 3));
    assert.deepEqual([cache.resolve('shop-a', 'orders').rule, cache.resolve('shop-a', 'orders').match], [tb(1), 'tenant-route']);
    assert.deepEqual([cache.resolve('shop-a', 'search').rule, cache.resolve('shop-a', 'search').match], [tb(2), 'tenant-any']);
    assert.deepEqual([cache.resolve('shop-b', 'orders').rule, cache.resolve('shop-b', 'orders').match], [tb(3), 'any-route']);
    assert.equal(cache.resolve('shop-b', 'search').rule, defaultRule);
    await store.putRule('*', '*', tb(4));
    await eventually(() => assert.deepEqual(cache.resolve('shop-b', 'search').rule, tb(4)));
    await cache.close();
    await store.close();
  });

  it('gives a rule a new version when (and only when) its parameters change', async () => {
    const store = new EmbeddedRuleStore({ dataDir: tempDir() });
    const cache = new RuleCache({ store, defaultRule, logger: silentLogger });
    await store.putRule('shop-a', 'orders', { policy: 'sliding_window_log', limit: 5, windowMs: 1000, lease: { batch: 2 } });
    await cache.start();
    const v1 = cache.resolve('shop-a', 'orders').version;
    await store.putRule('shop-a', 'orders', { policy: 'sliding_window_log', limit: 5, windowMs: 1000, lease: { batch: 2 } });
    await cache.refresh();
    assert.equal(cache.resolve('shop-a', 'orders').version, v1, 'same parameters, same version');
    await store.putRule('shop-a', 'orders', { policy: 'sliding_window_log', limit: 5, windowMs: 1000, lease: { batch: 3 } });
    await eventually(() => assert.notEqual(cache.resolve('shop-a', 'orders').version, v1));
    await cache.close();
    await store.close();
  });

  it('resolves API keys to tenants, and forgets a revoked key', async () => {
    const store = new EmbeddedRuleStore({ dataDir: tempDir() });
    const cache = new RuleCache({ store, defaultRule, logger: silentLogger });
    const early = await store.createKey('shop-a');
    await cache.start();
    assert.equal(cache.tenantFor(early.key), 'shop-a');
    const late = await store.createKey('shop-b');
    await eventually(() => assert.equal(cache.tenantFor(late.key), 'shop-b'));
    await store.revokeKey(early.id);
    await eventually(() => assert.equal(cache.tenantFor(early.key), undefined));
    assert.equal(cache.tenantFor('not-a-key'), undefined);
    assert.equal(cache.tenantFor(''), undefined);
    assert.equal(cache.tenantFor('x'.repeat(10_000)), undefined);
    assert.deepEqual({ ...cache.status(), lastSync: undefined, storeId: undefined }, { loaded: true, storeReachable: true, source: 'store', lastSync: undefined, rules: 0, keys: 1, overrides: 0, plans: 0, assignments: 0, lists: 0, version: 3, storeId: undefined }, 'three changes: version 3');
    await cache.close();
    await store.close();
  });

  it('writes a snapshot after a load, and starts from it when the store is unreachable', async () => {
    const dir = tempDir();
    const snapshotPath = join(dir, 'rules-snapshot.json');
    const store = new EmbeddedRuleStore({ dataDir: dir });
    await store.putRule('shop-a', 'orders', tb(7));
    const key = await store.createKey('shop-a');
    await store.overrides.put('login-per-ip', 'ip:203.0.113.0/24', tb(9));
    await store.plans.create('pro');
    await store.plans.putLimit('pro', 'global', '*', tb(11));
    await store.plans.assign('tenant', 'shop-b', 'pro');
    const keyB = await store.createKey('shop-c');
    await store.plans.assign('key', keyB.id, 'pro');
    await store.lists.add({ action: 'deny', match: { kind: 'cidr', cidr: '198.51.100.0/24' }, note: 'scanner' });
    const cache = new RuleCache({ store, defaultRule, snapshotPath, logger: silentLogger });
    await cache.start();
    await cache.close();
    await store.close();
    assert.ok(existsSync(snapshotPath));
    assert.equal(JSON.stringify(readSnapshot(snapshotPath)).includes(key.key), false, 'the snapshot holds key hashes, never keys');

    const logged: string[] = [];
    const logger = { ...silentLogger, error: (_: object, message: string) => logged.push(message) };
    const down = new PostgresRuleStore({ connectionString: 'postgres://postgres@127.0.0.1:1/sluice' });
    const fromSnapshot = new RuleCache({ store: down, defaultRule, snapshotPath, logger });
    await fromSnapshot.start();
    assert.deepEqual(fromSnapshot.resolve('shop-a', 'orders').rule, tb(7));
    assert.equal(fromSnapshot.tenantFor(key.key), 'shop-a');
    assert.deepEqual([...fromSnapshot.overrides().stored.values()].map((o) => [o.limitId, o.selector, o.rule]), [['login-per-ip', 'ip:203.0.113.0/24', tb(9)]], 'overrides too');
    assert.deepEqual([fromSnapshot.resolve('shop-b', 'orders').rule, fromSnapshot.resolve('shop-b', 'orders').plan], [tb(11), 'pro'], 'plans and assignments too');
    assert.deepEqual(fromSnapshot.identityFor(keyB.key), { tenant: 'shop-c', plan: 'pro' }, "a key's own plan too");
    const denied = fromSnapshot.lists().check({ route: 'orders', headers: {}, now: Date.now(), ip: () => ({ address: '198.51.100.7', family: 'ipv4' }) });
    assert.equal(denied.action, 'deny', 'the stored list entries too');
    assert.equal(fromSnapshot.status().source, 'snapshot');
    assert.equal(fromSnapshot.status().storeReachable, false);
    assert.match(logged.join('\n'), /UNREACHABLE AT START/);
    await fromSnapshot.close();
    await down.close();
  });

  it('fails to start with a clear message when the store is unreachable and there is no snapshot', async () => {
    const down = new PostgresRuleStore({ connectionString: 'postgres://postgres@127.0.0.1:1/sluice' });
    const snapshotPath = join(tempDir(), 'rules-snapshot.json');
    const cache = new RuleCache({ store: down, defaultRule, snapshotPath, logger: silentLogger });
    await assert.rejects(cache.start(), (error: Error) => {
      assert.match(error.message, /cannot load rules: .*127\.0\.0\.1:1.*no rules snapshot at .*rules-snapshot\.json/s);
      return true;
    });
    await cache.close();
    await down.close();
  });
});
