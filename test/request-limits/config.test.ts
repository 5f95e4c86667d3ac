import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/decision-service/load-config.js';

const UP = 'http://127.0.0.1:9';
const parse = (text: string) => parseConfig(text, { source: 'limits.yaml' });
const refused = (text: string, message: RegExp) => assert.throws(() => parse(text), message);

describe('limits in the config file', () => {
  it('gives a route without limits one limit per tenant, named after the route, cost 1, keyed', () => {
    const config = parse(`routes:\n  - { id: orders, path: /orders, upstream: ${UP} }\n`);
    const [route] = config.routes;
    assert.deepEqual(route?.limits, [{ id: 'orders', key: { kind: 'tenant' }, rule: undefined }]);
    assert.equal(route?.cost, 1);
    assert.equal(route?.anonymous, false);
    assert.deepEqual(config.clientIp, { trustedProxies: [], header: 'x-forwarded-for', ipv6Prefix: 64 });
  });

  it('reads anonymous routes, key sources, inline rules, cost and clientIp', () => {
    const config = parse(`
clientIp: { trustedProxies: [10.0.0.0/8, '::1/128'], header: forwarded, ipv6Prefix: 56 }
routes:
  - id: login
    methods: [POST]
    path: /api/login
    upstream: ${UP}
    anonymous: true
    limits:
      - { id: login-per-ip, key: ip, rule: { policy: leaky_bucket, ratePerSecond: 1, burst: 5, nodelay: true } }
  - id: by-user
    path: /me
    upstream: ${UP}
    limits: [{ id: per-user, key: { header: X-User-Id }, rule: { policy: fixed_window, limit: 10, windowMs: 1000 } }]
  - id: bulk
    path: /bulk
    upstream: ${UP}
    cost: 5
    limits: [{ id: bulk-per-tenant-ip, key: tenant+ip }]
  - id: ceiling
    path: /search
    upstream: ${UP}
    limits: [{ id: search-ceiling, key: route, rule: { policy: gcra, capacity: 100, refillPerSecond: 50 } }]
`);
    const [login, byUser, bulk, ceiling] = config.routes;
    assert.equal(login?.anonymous, true);
    assert.deepEqual(login?.limits[0]?.key, { kind: 'ip' });
    assert.equal(login?.limits[0]?.rule?.policy, 'leaky_bucket');
    assert.deepEqual(byUser?.limits[0]?.key, { kind: 'header', header: 'x-user-id' });
    assert.equal(bulk?.cost, 5);
    assert.deepEqual(bulk?.limits[0], { id: 'bulk-per-tenant-ip', key: { kind: 'tenant+ip' }, rule: undefined });
    assert.deepEqual(ceiling?.limits[0]?.key, { kind: 'route' });
    assert.deepEqual(config.clientIp, { trustedProxies: ['10.0.0.0/8', '::1/128'], header: 'forwarded', ipv6Prefix: 56 });
  });

  it('reads several limits on one route, in order, and refuses an empty list', () => {
    const config = parse(`routes:
  - id: api
    path: /api/*
    upstream: ${UP}
    limits:
      - { id: burst }
      - { id: daily, rule: { policy: fixed_window, limit: 10000, windowMs: 86400000 } }
`);
    assert.deepEqual(
      config.routes[0]?.limits.map((limit) => limit.id),
      ['burst', 'daily'],
    );
    refused(`routes:\n  - { id: api, path: /api, upstream: ${UP}, limits: [] }\n`, /routes\[0\]\.limits: must list at least one limit/);
  });

  it('appends the global limits to every route they apply to, after its own', () => {
    const config = parse(`
globalLimits:
  - { id: api-per-ip, key: ip, rule: { policy: leaky_bucket, ratePerSecond: 10, burst: 20, nodelay: true } }
  - { id: tenant-ceiling, key: tenant, rule: { policy: token_bucket, capacity: 100, refillPerSecond: 10 } }
routes:
  - { id: login, path: /login, upstream: ${UP}, anonymous: true, limits: [{ id: login-per-ip, key: ip, rule: { policy: gcra, capacity: 5, refillPerSecond: 1 } }] }
  - { id: orders, path: /orders, upstream: ${UP} }
`);
    assert.deepEqual(config.routes[0]?.limits.map((limit) => limit.id), ['login-per-ip', 'api-per-ip']);
    assert.deepEqual(config.routes[1]?.limits.map((limit) => limit.id), ['orders', 'api-per-ip', 'tenant-ceiling']);
    assert.deepEqual(config.globalLimits.map((limit) => limit.key.kind), ['ip', 'tenant']);
  });

  it('refuses a global limit without a rule, with a route id, or smaller than a route cost, naming the field and line', () => {
    refused(`globalLimits:\n  - { id: g, key: ip }\nroutes:\n  - { id: r, path: /r, upstream: ${UP} }\n`, /limits\.yaml:2: globalLimits\[0\]\.rule: is required/);
    refused(
      `globalLimits:\n  - { id: r, key: route, rule: { policy: gcra, capacity: 5, refillPerSecond: 1 } }\nroutes:\n  - { id: r, path: /r, upstream: ${UP} }\n`,
      /globalLimits\[0\]\.id: duplicate limit id r/,
    );
    refused(
      `globalLimits:\n  - { id: g, key: route, rule: { policy: gcra, capacity: 5, refillPerSecond: 1 } }\nroutes:\n  - { id: r, path: /r, upstream: ${UP}, cost: 6 }\n`,
      /routes\[0\]\.cost: must be at most 5, the capacity of global limit g/,
    );
  });

  it('refuses tenant keys, or no limits, on an anonymous route', () => {
    refused(`routes:\n  - { id: login, path: /login, upstream: ${UP}, anonymous: true }\n`, /routes\[0\]\.limits: is required on an anonymous route/);
    refused(
      `routes:\n  - { id: login, path: /login, upstream: ${UP}, anonymous: true, limits: [{ id: l, key: tenant }] }\n`,
      /routes\[0\]\.limits\[0\]\.key: tenant cannot key a limit of an anonymous route/,
    );
    refused(
      `routes:\n  - { id: login, path: /login, upstream: ${UP}, anonymous: true, limits: [{ id: l, key: tenant+ip, rule: { policy: gcra, capacity: 1, refillPerSecond: 1 } }] }\n`,
      /routes\[0\]\.limits\[0\]\.key: tenant\+ip cannot key/,
    );
  });

  it('needs a rule for limits that have no tenant to look one up by', () => {
    refused(`routes:\n  - { id: login, path: /login, upstream: ${UP}, limits: [{ id: l, key: ip }] }\n`, /routes\[0\]\.limits\[0\]\.rule: is required: a limit keyed by ip/);
    refused(
      `routes:\n  - { id: login, path: /login, upstream: ${UP}, limits: [{ id: l, key: route, rule: { policy: gcra, capacity: 0, refillPerSecond: 1 } }] }\n`,
      /routes\[0\]\.limits\[0\]\.rule\.capacity: must be at least 1/,
    );
  });

  it('checks the cost against inline rules, seeded rules and the default rule', () => {
    const rule = '{ policy: token_bucket, capacity: 4, refillPerSecond: 1 }';
    refused(`routes:\n  - { id: bulk, path: /bulk, upstream: ${UP}, cost: 5, limits: [{ id: b, key: ip, rule: ${rule} }] }\n`, /routes\[0\]\.cost: must be at most 4, the capacity of limit b/);
    refused(`defaultRule: ${rule}\nroutes:\n  - { id: bulk, path: /bulk, upstream: ${UP}, cost: 5 }\n`, /routes\[0\]\.cost: must be at most 4, the capacity of the default rule/);
    refused(
      `routes:\n  - { id: bulk, path: /bulk, upstream: ${UP}, cost: 5 }\nrules:\n  - { tenant: t1, route: bulk, policy: gcra, capacity: 2, refillPerSecond: 1 }\n`,
      /routes\[0\]\.cost: must be at most 2, the capacity of the rule of tenant t1 × route bulk/,
    );
    refused(`routes:\n  - { id: bulk, path: /bulk, upstream: ${UP}, cost: 0 }\n`, /routes\[0\]\.cost: must be at least 1/);
    assert.equal(parse(`routes:\n  - { id: bulk, path: /bulk, upstream: ${UP}, cost: 20 }\n`).routes[0]?.cost, 20);
  });

  it('keeps limit ids unique and out of the derived namespace', () => {
    refused(
      `routes:\n  - { id: a, path: /a, upstream: ${UP} }\n  - { id: b, path: /b, upstream: ${UP}, limits: [{ id: a }] }\n`,
      /routes\[1\]\.limits\[0\]\.id: duplicate limit id a/,
    );
    refused(
      `routes:\n  - { id: a, path: /a, upstream: ${UP}, limits: [{ id: x }] }\n  - { id: b, path: /b, upstream: ${UP}, limits: [{ id: x }] }\n`,
      /routes\[1\]\.limits\[0\]\.id: duplicate limit id x/,
    );
    refused(`routes:\n  - { id: a, path: /a, upstream: ${UP}, limits: [{ id: '~ip' }] }\n`, /routes\[0\]\.limits\[0\]\.id: must not contain ~/);
    refused(`routes:\n  - { id: a, path: /a, upstream: ${UP}, limits: [{ id: 'a:b' }] }\n`, /routes\[0\]\.limits\[0\]\.id: must be an id/);
    refused(`routes:\n  - { id: a, path: /a, upstream: ${UP}, limits: [{ id: '${'x'.repeat(43)}', key: tenant+ip }] }\n`, /must be at most 42 characters with key tenant\+ip/);
    assert.ok(parse(`routes:\n  - { id: a, path: /a, upstream: ${UP}, limits: [{ id: a }] }\n`));
  });

  it('refuses unknown key sources and bad header names', () => {
    refused(`routes:\n  - { id: a, path: /a, upstream: ${UP}, limits: [{ id: l, key: cookie }] }\n`, /routes\[0\]\.limits\[0\]\.key: must be tenant, ip, route, tenant\+ip, \{ header: Name \}, \{ claim: name \} or \{ body: field \}/);
    refused(`routes:\n  - { id: a, path: /a, upstream: ${UP}, limits: [{ id: l, key: { header: 'X User' } }] }\n`, /routes\[0\]\.limits\[0\]\.key/);
  });

  it('refuses a bad trusted proxy CIDR, naming the field and the line', () => {
    refused(`routes:\n  - { id: a, path: /a, upstream: ${UP} }\nclientIp:\n  trustedProxies:\n    - 10.0.0.0/8\n    - 10.0.0.0/33\n`, /limits\.yaml:6: clientIp\.trustedProxies\[1\]: must be an IPv4 or IPv6 CIDR/);
    refused(`routes:\n  - { id: a, path: /a, upstream: ${UP} }\nclientIp: { trustedProxies: [localhost] }\n`, /clientIp\.trustedProxies\[0\]: must be an IPv4 or IPv6 CIDR/);
    refused(`routes:\n  - { id: a, path: /a, upstream: ${UP} }\nclientIp: { ipv6Prefix: 129 }\n`, /clientIp\.ipv6Prefix: must be at most 128/);
    refused(`routes:\n  - { id: a, path: /a, upstream: ${UP} }\nclientIp: { header: x-real-ip }\n`, /clientIp\.header: must be x-forwarded-for or forwarded/);
  });
});
