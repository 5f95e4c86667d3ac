// The per-key overrides every RuleStore keeps, run on PostgreSQL and on the
// embedded store by their own test files (beside store-contract.ts), and the
// rule cache that serves them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Rule } from '../../src/policies/rule.js';
import { headerBucketId } from '../../src/request-limits/request-limits.js';
import { RuleCache } from '../../src/rules/cache/rule-cache.js';
import type { RuleStore, StoreChange } from '../../src/rules/store.js';
import { recordingLogger, type StoreFactory } from './store-contract.js';
import { eventually } from '../helpers/poll.js';

const more: Rule = { policy: 'leaky_bucket', ratePerSecond: 1, burst: 50, nodelay: true };
const less: Rule = { policy: 'fixed_window', limit: 3, windowMs: 60_000 };
const defaultRule: Rule = { policy: 'token_bucket', capacity: 20, refillPerSecond: 10 };

export function overrideContract(name: string, factory: StoreFactory): void {
  describe(`override store contract: ${name}`, () => {
    let location: string;
    let store: RuleStore;
    before(async () => {
      location = await factory.location();
      store = factory.open(location);
    });
    after(async () => {
      await store.close();
      await factory.cleanup?.();
    });

    it('puts, gets, lists and deletes overrides, keyed by the canonical selector', async () => {
      const cases: [string, string, Rule][] = [
        ['ip:203.0.113.7/32', 'ip:203.0.113.7', more],
        ['ip:203.0.113.0/24', 'ip:203.0.113.0/24', less],
        ['ip:2001:DB8:0:0::/48', 'ip:2001:db8::/48', more],
        ['ip:::ffff:198.51.100.9', 'ip:198.51.100.9', more],
        ['tenant:shop-a', 'tenant:shop-a', less],
        ['header:user-42', `header:${headerBucketId('user-42')}`, more],
      ];
      for (const [selector, canonical, rule] of cases) {
        const stored = await store.overrides.put('login-per-ip', selector, rule);
        assert.deepEqual([stored.limitId, stored.selector, stored.rule], ['login-per-ip', canonical, rule]);
        assert.ok(!Number.isNaN(Date.parse(stored.updatedAt)));
        assert.deepEqual((await store.overrides.get('login-per-ip', selector))?.selector, canonical, 'read back by any spelling');
      }
      await store.overrides.put('other-limit', 'tenant:shop-b', less);
      assert.equal((await store.overrides.list()).length, cases.length + 1);
      assert.deepEqual((await store.overrides.list({ limitId: 'other-limit' })).map((o) => o.selector), ['tenant:shop-b']);
      // A second PUT of the same key under another spelling replaces, never duplicates.
      await store.overrides.put('login-per-ip', 'ip:203.0.113.7', less);
      assert.deepEqual((await store.overrides.get('login-per-ip', 'ip:203.0.113.7/32'))?.rule, less);
      assert.equal((await store.overrides.list({ limitId: 'login-per-ip' })).length, cases.length);
      for (const [selector] of cases) assert.equal(await store.overrides.delete('login-per-ip', selector), true);
      assert.equal(await store.overrides.delete('login-per-ip', 'tenant:shop-a'), false);
      assert.equal(await store.overrides.delete('other-limit', 'tenant:shop-b'), true);
      assert.deepEqual(await store.overrides.list(), []);
    });

    it('refuses bad ids and selectors, naming the field, before writing', async () => {
      const refused = async (limitId: string, selector: string, field: string) => {
        await assert.rejects(store.overrides.put(limitId, selector, more), (error: { field?: string }) => error.field === field);
      };
      await refused('login:ip', 'ip:10.0.0.1', 'limitId');
      await refused('*', 'ip:10.0.0.1', 'limitId');
      for (const selector of ['ip:10.0.0.256', 'ip:10.1.2.3/8', 'ip:10.0.0.0/33', 'ip:2001:db8::/129', 'ip:[::1]', 'ip:10.0.0.1:80', 'cookie:x', 'tenant:~abc', 'tenant:a b', 'header:', 'ip']) {
        await refused('login-per-ip', selector, 'selector');
      }
      assert.deepEqual(await store.overrides.list(), []);
    });

    it('announces each change to watchers', async () => {
      const seen: StoreChange[] = [];
      const unwatch = await store.watch((change) => seen.push(change));
      try {
        await store.overrides.put('login-per-ip', 'ip:192.0.2.0/24', more);
        await eventually(() => assert.ok(seen.some((c) => c.kind === 'override' && c.limitId === 'login-per-ip' && c.selector === 'ip:192.0.2.0/24'), 'put announced'));
        seen.length = 0;
        assert.equal(await store.overrides.delete('login-per-ip', 'ip:192.0.2.0/24'), true);
        await eventually(() => assert.ok(seen.some((c) => c.kind === 'override' && c.selector === 'ip:192.0.2.0/24'), 'delete announced'));
      } finally {
        unwatch();
      }
    });

    it('take a row of a policy no schema lists (the database checks form only) and skip it on read, naming the field', async () => {
      const logger = recordingLogger();
      const own = await factory.location();
      const edited = factory.open(own, { logger });
      try {
        await edited.overrides.put('login-per-ip', 'tenant:shop-a', less);
        await factory.sql(own, `INSERT INTO limit_override (limit_id, selector, policy, params) VALUES ('login-per-ip', 'tenant:shop-b', 'new_policy', '{"limit": 5}')`);
        assert.deepEqual((await edited.overrides.list()).map((o) => o.selector), ['tenant:shop-a']);
        assert.equal(await edited.overrides.get('login-per-ip', 'tenant:shop-b'), undefined);
        const skipped = logger.lines.filter((line) => line.startsWith('skipping an invalid override row'));
        assert.equal(skipped.length, 2, logger.lines.join('\n'));
        for (const line of skipped) assert.match(line, /limit_override\[login-per-ip\]\.policy: unknown policy \\"new_policy\\"/);
      } finally {
        await edited.close();
      }
    });

    it('a rule cache serves them, follows changes, and skips a hand-edited row it cannot trust', async () => {
      const logger = recordingLogger();
      await store.close();
      store = factory.open(location, { logger });
      await factory.sql(location, `INSERT INTO limit_override (limit_id, selector, policy, params) VALUES ('login-per-ip', 'ip:10.1.2.3/8', 'fixed_window', '{"limit": 5, "windowMs": 1000}')`);
      await store.overrides.put('login-per-ip', 'tenant:shop-a', less);
      const cache = new RuleCache({ store, defaultRule, logger });
      await cache.start();
      try {
        assert.deepEqual([...cache.overrides().stored.values()].map((o) => o.selector), ['tenant:shop-a']);
        assert.ok(logger.lines.some((line) => line.startsWith('skipping an override row')), logger.lines.join('\n'));
        assert.ok(!logger.lines.join('\n').includes('10.1.2.3'), 'the selector (maybe a client address) is never logged');
        await store.overrides.put('login-per-ip', 'ip:2001:db8::/32', more);
        await eventually(() => assert.equal(cache.overrides().byLimit.get('login-per-ip')?.ipv6.lengths[0], 32), 5000);
        await store.overrides.delete('login-per-ip', 'tenant:shop-a');
        await eventually(() => assert.equal(cache.overrides().byLimit.get('login-per-ip')?.tenants.size, 0), 5000);
        assert.equal(cache.status().overrides, 1);
      } finally {
        await cache.close();
      }
    });
  });
}
