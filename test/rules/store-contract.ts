// The one contract every RuleStore keeps, run on PostgreSQL and on the embedded
// store by their own test files.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Rule } from '../../src/policies/rule.js';
import type { RulesLogger } from '../../src/rules/logger.js';
import type { RuleStore, SeedRule, StoreChange } from '../../src/rules/store.js';
import { eventually } from '../helpers/poll.js';

export interface StoreFactory {
  /** Where a fresh, empty store can live (a data dir, a database URL). */
  location(): Promise<string>;
  open(location: string, options?: { seedRules?: SeedRule[]; logger?: RulesLogger }): RuleStore;
  /** One SQL statement straight to the store's database, as an operator with a SQL shell would. */
  sql(location: string, text: string): Promise<void>;
  /** Called once after every test of the suite. */
  cleanup?(): Promise<void>;
}

/** A logger that keeps what it was told. */
export function recordingLogger(): RulesLogger & { lines: string[] } {
  const lines: string[] = [];
  const keep = (details: object, message: string): void => {
    lines.push(`${message} ${JSON.stringify(details)}`);
  };
  return { lines, info: keep, warn: keep, error: keep };
}

const bucket: Rule = { policy: 'token_bucket', capacity: 200, refillPerSecond: 100 };

export function storeContract(name: string, factory: StoreFactory): void {
  describe(`RuleStore contract: ${name}`, () => {
    let store: RuleStore;
    before(async () => {
      store = factory.open(await factory.location());
    });
    after(async () => {
      await store.close();
      await factory.cleanup?.();
    });

    it('puts, gets, lists and deletes rules of every policy', async () => {
      const rules: [string, string, Rule][] = [
        ['shop-a', 'create-order', bucket],
        ['shop-a', '*', { policy: 'gcra', capacity: 10, refillPerSecond: 0.5, shadow: true }],
        ['*', 'search', { policy: 'fixed_window', limit: 100, windowMs: 60_000, onStoreDown: 'open' }],
        ['shop-b', 'log', { policy: 'sliding_window_log', limit: 50, windowMs: 1000, lease: { batch: 5 } }],
        ['shop-b', 'count', { policy: 'sliding_window_counter', limit: 1000, windowMs: 60_000, shards: 4, regionShares: { eu: 0.7, us: 0.3 } }],
        ['shop-c', 'leak', { policy: 'leaky_bucket', ratePerSecond: 10, burst: 20, delay: 5 }],
        ['shop-c', 'monthly', { policy: 'fixed_window', limit: 10_000, calendar: { unit: 'month', timeZone: 'Europe/Paris', anchor: 31 } }],
      ];
      for (const [tenant, route, rule] of rules) {
        const stored = await store.putRule(tenant, route, rule);
        assert.deepEqual(stored.rule, rule);
        assert.equal(stored.tenant, tenant);
        assert.ok(!Number.isNaN(Date.parse(stored.updatedAt)));
      }
      for (const [tenant, route, rule] of rules) assert.deepEqual((await store.getRule(tenant, route))?.rule, rule);
      const listed = await store.listRules();
      assert.equal(listed.length, rules.length);
      assert.deepEqual((await store.listRules({ tenant: 'shop-b' })).map((r) => r.route).sort(), ['count', 'log']);
      for (const [tenant, route] of rules) assert.equal(await store.deleteRule(tenant, route), true);
      assert.equal(await store.deleteRule('shop-a', 'create-order'), false);
      assert.deepEqual(await store.listRules(), []);
    });

    it('replaces a rule in place and moves updatedAt forward', async () => {
      const first = await store.putRule('shop-a', 'orders', bucket);
      const second = await store.putRule('shop-a', 'orders', { policy: 'fixed_window', limit: 5, windowMs: 1000 });
      assert.deepEqual(second.rule, { policy: 'fixed_window', limit: 5, windowMs: 1000 });
      assert.ok(Date.parse(second.updatedAt) >= Date.parse(first.updatedAt));
      assert.equal((await store.listRules({ tenant: 'shop-a' })).length, 1);
      await store.deleteRule('shop-a', 'orders');
    });

    it('stores shadow: false as the same rule without shadow', async () => {
      const stored = await store.putRule('shop-a', 'quiet', { ...bucket, shadow: false });
      assert.deepEqual(stored.rule, bucket);
      await store.deleteRule('shop-a', 'quiet');
    });

    it('refuses invalid ids, writing nothing (rules are parsed before they reach a store)', async () => {
      const bad: [string, string, RegExp][] = [
        ['shop:a', 'r', /tenant/],
        ['~anon', 'r', /tenant/],
        ['shop-a', 'x'.repeat(65), /route/],
        ['shop-a', 'a b', /route/],
      ];
      for (const [tenant, route, pattern] of bad) {
        await assert.rejects(store.putRule(tenant, route, bucket), pattern);
      }
      assert.deepEqual(await store.listRules(), []);
    });

    it('answers a write with exactly what a read gives back', async () => {
      const written = await store.putRule('shop-r', 'echo', { policy: 'leaky_bucket', ratePerSecond: 2, burst: 3, nodelay: true, shadow: false });
      const read = await store.getRule('shop-r', 'echo');
      assert.deepEqual(written, read);
      assert.deepEqual(written.rule, { policy: 'leaky_bucket', ratePerSecond: 2, burst: 3, nodelay: true });
      await store.deleteRule('shop-r', 'echo');
    });

    it('checks every row it reads: a hand-edited row that fails parseRule is logged and skipped', async () => {
      const location = await factory.location();
      const logger = recordingLogger();
      const edited = factory.open(location, { logger });
      try {
        await edited.putRule('shop-a', 'good', bucket);
        // Valid for the schema's CHECKs, invalid for parseRule (an unknown field in params).
        await factory.sql(location, `INSERT INTO rate_limit_rule (tenant_id, route_id, policy, params) VALUES ('shop-a', 'odd', 'fixed_window', '{"limit": 5, "windowMs": 1000, "bogus": 1}')`);
        assert.deepEqual((await edited.listRules()).map((r) => r.route), ['good']);
        assert.equal(await edited.getRule('shop-a', 'odd'), undefined);
        assert.equal(logger.lines.filter((line) => line.startsWith('skipping an invalid rule row') && line.includes('bogus')).length, 2, logger.lines.join('\n'));
      } finally {
        await edited.close();
      }
    });

    it('takes a row of a policy no schema lists (the database checks form only) and skips it on read, naming the field', async () => {
      const location = await factory.location();
      const logger = recordingLogger();
      const edited = factory.open(location, { logger });
      try {
        await edited.putRule('shop-a', 'good', bucket);
        // A policy this Sluice does not know: the database takes it (migrations/010), parseRule does not.
        await factory.sql(location, `INSERT INTO rate_limit_rule (tenant_id, route_id, policy, params) VALUES ('shop-a', 'newer', 'new_policy', '{"limit": 5}')`);
        assert.deepEqual((await edited.listRules()).map((r) => r.route), ['good']);
        assert.equal(await edited.getRule('shop-a', 'newer'), undefined);
        const skipped = logger.lines.filter((line) => line.startsWith('skipping an invalid rule row'));
        assert.equal(skipped.length, 2, logger.lines.join('\n'));
        for (const line of skipped) assert.match(line, /rate_limit_rule\[shop-a\/newer\]\.policy: unknown policy \\"new_policy\\"/);
      } finally {
        await edited.close();
      }
    });

    it('seeds the config rules on the first start only, stored as a put would store them', async () => {
      const location = await factory.location();
      const seedRules: SeedRule[] = [
        { tenant: 'shop-a', route: 'orders', rule: { ...bucket, shadow: false } },
        { tenant: '*', route: 'search', rule: { policy: 'fixed_window', limit: 9, windowMs: 1000, lease: { batch: 2 } } },
      ];
      const first = factory.open(location, { seedRules });
      const seeded = await first.listRules();
      assert.deepEqual(seeded.map((r) => [r.tenant, r.route, r.rule]), [
        ['*', 'search', seedRules[1]!.rule],
        ['shop-a', 'orders', bucket],
      ]);
      assert.ok(seeded.every((r) => !Number.isNaN(Date.parse(r.updatedAt))));
      await first.deleteRule('shop-a', 'orders');
      await first.close();
      const second = factory.open(location, { seedRules });
      assert.deepEqual((await second.listRules()).map((r) => r.route), ['search'], 'a rule deleted through the API stays deleted');
      await second.close();
    });

    it('creates keys shown once, stores only their SHA-256, lists and revokes them', async () => {
      const created = await store.createKey('shop-a');
      assert.match(created.key, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(Buffer.from(created.key, 'base64url').length, 32);
      const other = await store.createKey('shop-b');
      assert.notEqual(created.key, other.key);

      const record = await store.getKey(created.id);
      assert.equal(record?.hash, createHash('sha256').update(created.key).digest('hex'));
      assert.equal(record?.tenant, 'shop-a');
      assert.equal(JSON.stringify(await store.listKeys()).includes(created.key), false);

      assert.deepEqual((await store.listKeys('shop-a')).map((k) => k.id), [created.id]);
      assert.equal((await store.listKeys()).length, 2);
      assert.deepEqual((await store.listActiveKeyHashes()).map((k) => k.id).sort(), [created.id, other.id].sort());

      const revoked = await store.revokeKey(created.id);
      assert.ok(revoked?.revokedAt);
      assert.ok((await store.revokeKey(created.id))?.revokedAt, 'revoking twice is idempotent');
      assert.equal(await store.revokeKey('key_missing'), undefined);
      assert.deepEqual((await store.listActiveKeyHashes()).map((k) => k.id), [other.id]);
      assert.equal((await store.listKeys('shop-a'))[0]?.revokedAt, revoked.revokedAt);
      await assert.rejects(store.createKey('bad tenant'), /tenant/);
      await assert.rejects(store.revokeKey('bad/id'), /id/);
    });

    it('announces every committed change to watchers', async () => {
      const seen: StoreChange[] = [];
      const stop = await store.watch((change) => seen.push(change));
      const has = (wanted: (c: StoreChange) => boolean) => () => assert.ok(seen.some(wanted), JSON.stringify(seen));
      await store.putRule('shop-w', 'watched', bucket);
      await eventually(has((c) => c.kind === 'rule' && c.tenant === 'shop-w' && c.route === 'watched'));
      seen.length = 0;
      await store.deleteRule('shop-w', 'watched');
      await eventually(has((c) => c.kind === 'rule' && c.tenant === 'shop-w'));
      const key = await store.createKey('shop-w');
      await eventually(has((c) => c.kind === 'key' && c.id === key.id));
      seen.length = 0;
      await store.revokeKey(key.id);
      await eventually(has((c) => c.kind === 'key' && c.id === key.id));
      stop();
      seen.length = 0;
      await store.putRule('shop-w', 'after', bucket);
      await store.getRule('shop-w', 'after'); // a round trip: a stray notification would have arrived
      await new Promise((resolve) => setImmediate(resolve));
      assert.deepEqual(seen.filter((c) => c.kind === 'rule'), []);
      await store.deleteRule('shop-w', 'after');
    });

    it('raises the rule-set version once per change, rules, overrides, keys and tokens alike, and announces it after the change', async () => {
      const seen: StoreChange[] = [];
      const stop = await store.watch((change) => seen.push(change));
      const version = async () => (await store.ruleSetVersion!()).version;
      let expected = await version();
      const step = async (what: string, change: () => Promise<unknown>) => {
        seen.length = 0;
        await change();
        expected++;
        assert.equal(await version(), expected, `${what}: one step`);
        await eventually(() => assert.ok(seen.some((c) => c.kind === 'version' && c.version === expected), `${what}: ${JSON.stringify(seen)}`));
        const at = seen.findIndex((c) => c.kind === 'version');
        assert.ok(seen.slice(0, at).length > 0 || what === 'token', `${what}: the change is announced before its version: ${JSON.stringify(seen)}`);
      };
      await step('rule put', () => store.putRule('shop-v', 'versioned', bucket));
      await step('rule replaced', () => store.putRule('shop-v', 'versioned', { policy: 'token_bucket', capacity: 300, refillPerSecond: 100 }));
      await step('override', () => store.overrides.put('per-ip', 'tenant:shop-v', bucket));
      const key = await store.createKey('shop-v');
      expected++;
      assert.equal(await version(), expected, 'key created: one step');
      await step('key revoked', () => store.revokeKey(key.id));
      await step('token', () => store.team.createToken('versioned', 'read'));
      stop();
      const { storeId } = await store.ruleSetVersion!();
      assert.match(storeId, /^[0-9a-f-]{32,36}$/, 'a random id names the store');
      assert.equal((await store.ruleSetVersion!()).storeId, storeId, 'the same store, the same id');
      await store.deleteRule('shop-v', 'versioned');
      await store.overrides.delete('per-ip', 'tenant:shop-v');
    });
  });
}
