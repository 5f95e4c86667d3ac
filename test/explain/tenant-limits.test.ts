// The limits that count a tenant's own requests, read off a config as the
// gateway would form them: tenant-keyed and tenant+ip limits of every route
// that is not anonymous, a global limit once for all its routes, the rule and
// its source as explain names them, and no limit keyed by anything else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/decision-service/load-config.js';
import type { ExplainContext } from '../../src/explain/explain.js';
import { tenantLimits } from '../../src/explain/tenant-limits.js';
import { resolversFor } from '../../src/rules/resolvers.js';

const YAML = `
globalLimits:
  - { id: per-tenant-day, key: tenant, rule: { policy: fixed_window, limit: 10000, windowMs: 86400000 } }
  - { id: per-ip-global, key: ip, rule: { policy: token_bucket, capacity: 100, refillPerSecond: 10 } }
routes:
  - id: login
    path: /login
    upstream: http://127.0.0.1:9
    anonymous: true
    limits: [{ id: login-per-ip, key: ip, rule: { policy: leaky_bucket, ratePerSecond: 1, burst: 2 } }]
  - id: orders
    path: /orders
    upstream: http://127.0.0.1:9
    limits:
      - { id: orders-rate, key: tenant, rule: { policy: gcra, capacity: 5, refillPerSecond: 1 } }
      - { id: orders-user, key: { header: X-User-Id }, rule: { policy: token_bucket, capacity: 5, refillPerSecond: 1 } }
      - { id: orders-per-address, key: tenant+ip, rule: { policy: token_bucket, capacity: 5, refillPerSecond: 1 } }
  - id: search
    path: /search
    upstream: http://127.0.0.1:9
  - id: reports
    path: /reports
    upstream: http://127.0.0.1:9
    limits: [{ id: ceiling, key: route, rule: { policy: gcra, capacity: 50, refillPerSecond: 5 } }]
tenants:
  keys:
    - { key: key-shop-a-0001, tenant: shop-a }
rules:
  - { tenant: shop-a, route: search, policy: token_bucket, capacity: 30, refillPerSecond: 3 }
defaultRule: { policy: token_bucket, capacity: 20, refillPerSecond: 2 }
`;

function contextOf(yaml = YAML): ExplainContext {
  const config = parseConfig(yaml, { source: 'test.yaml', env: {} });
  const resolvers = resolversFor(config);
  return { config, rules: resolvers.rules, tenants: resolvers.tenants, ruleStore: false };
}

describe('tenantLimits', () => {
  it("lists the limits whose bucket is the tenant's, once each, with the routes they count", () => {
    const limits = tenantLimits(contextOf(), 'shop-a');
    assert.deepEqual(
      limits.map((limit) => [limit.id, limit.keyedBy, limit.routes, limit.global]),
      [
        ['orders-rate', 'tenant', ['orders'], false],
        ['orders-per-address', 'tenant+ip', ['orders'], false],
        ['per-tenant-day', 'tenant', ['orders', 'search', 'reports'], true],
        ['search', 'tenant', ['search'], false],
      ],
      'not the anonymous login, nor limits keyed by address, header or route',
    );
  });

  it('gives each its rule and where it came from, and the bucket the gateway charges', () => {
    const byId = new Map(tenantLimits(contextOf(), 'shop-a').map((limit) => [limit.id, limit]));
    assert.deepEqual(byId.get('search')?.rule, { policy: 'token_bucket', capacity: 30, refillPerSecond: 3 });
    assert.equal(byId.get('search')?.source?.from, 'config');
    assert.equal(byId.get('search')?.source?.match, 'tenant-route');
    assert.deepEqual([byId.get('orders-rate')?.bucket?.redisKey, byId.get('orders-rate')?.bucket?.field], ['rl:{shop-a}', 'orders-rate']);
    assert.equal(byId.get('orders-per-address')?.bucket, undefined, 'a tenant+ip limit has a bucket per client address');
    // Another tenant meets the default rule on search.
    const other = new Map(tenantLimits(contextOf(), 'shop-b').map((limit) => [limit.id, limit]));
    assert.deepEqual(other.get('search')?.rule, { policy: 'token_bucket', capacity: 20, refillPerSecond: 2 });
    assert.equal(other.get('search')?.source?.from, 'default-rule');
  });
});
