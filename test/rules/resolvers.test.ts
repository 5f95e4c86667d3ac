// The resolvers built from the config file alone: the same lookup as the rule
// cache, and unknown keys in a namespace no named tenant can reach.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SluiceConfig } from '../../src/config/types.js';
import type { Rule } from '../../src/policies/rule.js';
import { anonymousTenant, assertTenantId } from '../../src/rules/anonymous-tenant.js';
import { hashApiKeyHex } from '../../src/rules/keys.js';
import { resolversFor } from '../../src/rules/resolvers.js';
import { assertRuleTarget } from '../../src/rules/rule-columns.js';
import { KeyTenantResolver } from '../../src/rules/tenant-resolver.js';

const tb = (capacity: number): Rule => ({ policy: 'token_bucket', capacity, refillPerSecond: 1 });
const defaultRule = tb(20);

function configWith(rules: SluiceConfig['rules'], unknownKeys: 'reject' | 'default-rule', keys: { key: string; tenant: string }[] = []) {
  const tenants = { header: 'x-api-key', unknownKeys, keys: keys.map(({ key, tenant }) => ({ keyHash: hashApiKeyHex(key), tenant })) };
  return { rules, defaultRule, tenants } as Pick<SluiceConfig, 'rules' | 'defaultRule' | 'tenants'>;
}

describe('resolvers from the config file', () => {
  it('resolves tenant × route, then tenant × any, then any × route, then any × any, then the default', () => {
    const rules = [
      { tenant: 'shop-a', route: 'orders', rule: tb(1) },
      { tenant: 'shop-a', route: '*', rule: tb(2) },
      { tenant: '*', route: 'orders', rule: tb(3) },
    ];
    const { rules: resolver } = resolversFor(configWith(rules, 'reject'));
    const got = (tenant: string, route: string) => {
      const { rule, match } = resolver.resolve(tenant, route);
      return [rule, match];
    };
    assert.deepEqual(got('shop-a', 'orders'), [tb(1), 'tenant-route']);
    assert.deepEqual(got('shop-a', 'search'), [tb(2), 'tenant-any']);
    assert.deepEqual(got('shop-b', 'orders'), [tb(3), 'any-route']);
    assert.deepEqual(got('shop-b', 'search'), [defaultRule, 'default']);
    const withAny = resolversFor(configWith([...rules, { tenant: '*', route: '*', rule: tb(4) }], 'reject')).rules;
    // `*` × `*` reads as the default, as it does in the rule cache.
    assert.deepEqual([withAny.resolve('shop-b', 'search').rule, withAny.resolve('shop-b', 'search').match], [tb(4), 'default']);
  });

  it('the same parameters give the same version, a changed one a new version', () => {
    const a = resolversFor(configWith([{ tenant: 't', route: '*', rule: tb(5) }], 'reject')).rules;
    const b = resolversFor(configWith([{ tenant: 't', route: '*', rule: { refillPerSecond: 1, capacity: 5, policy: 'token_bucket' } }], 'reject')).rules;
    const c = resolversFor(configWith([{ tenant: 't', route: '*', rule: tb(6) }], 'reject')).rules;
    assert.equal(a.resolve('t', 'r').version, b.resolve('t', 'r').version);
    assert.notEqual(a.resolve('t', 'r').version, c.resolve('t', 'r').version);
  });

  it('keys: a known key gets its tenant; an unknown one is refused, or under default-rule gets a ~ tenant of its own', () => {
    const keys = [{ key: 'vip-key-0001', tenant: 'vip' }];
    const reject = resolversFor(configWith([], 'reject', keys)).tenants;
    assert.equal(reject.tenantFor('vip-key-0001'), 'vip');
    assert.equal(reject.tenantFor('vip'), undefined);
    const open = resolversFor(configWith([{ tenant: 'gold', route: '*', rule: tb(9) }], 'default-rule', keys)).tenants;
    assert.equal(open.tenantFor('vip-key-0001'), 'vip');
    for (const key of ['vip', 'gold', '{vip}', 'a:b', '~vip']) {
      const tenant = open.tenantFor(key)!;
      assert.match(tenant, /^~[0-9a-f]{32}$/, key);
      assert.equal(tenant, anonymousTenant(hashApiKeyHex(key)));
    }
    assert.notEqual(open.tenantFor('vip'), open.tenantFor('gold'), 'each unknown key has its own tenant');
  });

  it('key tables are asked in order: the store first, then the config', () => {
    const resolver = new KeyTenantResolver(
      [{ tenantForHash: (hash) => (hash === hashApiKeyHex('k1') ? 'from-store' : undefined) }, { tenantForHash: () => 'from-config' }],
      'reject',
    );
    assert.equal(resolver.tenantFor('k1'), 'from-store');
    assert.equal(resolver.tenantFor('k2'), 'from-config');
  });

  it('named tenants may not use the reserved ~ prefix, in rules or keys', () => {
    assert.throws(() => assertRuleTarget('~vip', '*'), /must not start with ~/);
    assert.throws(() => assertTenantId('~vip', 'body.tenant'), /must not start with ~/);
    assert.doesNotThrow(() => assertRuleTarget('vip~1', '*'));
  });
});
