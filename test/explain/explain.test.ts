// `sluice explain` on a config: one test per reason a route does not take a
// request and per reason a limit is skipped, each limit's key, rule source and
// Redis key, and the text rendering. No I/O: explainRequest is pure.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { type ExplainContext, explainRequest, type Explanation } from '../../src/explain/explain.js';
import { renderText } from '../../src/explain/render.js';
import { parseSample, type SampleFields } from '../../src/explain/sample.js';
import { buildOverrideSet } from '../../src/rules/override-set.js';
import { resolversFor } from '../../src/rules/resolvers.js';
import type { RuleResolver } from '../../src/rules/types.js';

const YAML = `
globalLimits:
  - { id: per-tenant-day, key: tenant, rule: { policy: fixed_window, limit: 10000, windowMs: 86400000 } }
  - { id: per-ip-global, key: ip, rule: { policy: token_bucket, capacity: 100, refillPerSecond: 10 } }
routes:
  - id: login
    methods: [POST]
    path: /login
    upstream: http://127.0.0.1:9
    anonymous: true
    limits: [{ id: login-per-ip, key: ip, rule: { policy: leaky_bucket, ratePerSecond: 1, burst: 2 } }]
  - id: admin-host
    path: /admin/*
    host: admin.example.com
    upstream: http://127.0.0.1:9
  - id: Reports
    path: /Reports
    upstream: http://127.0.0.1:9
    limits: [{ id: per-user, key: { header: X-User-Id }, rule: { policy: sliding_window_log, limit: 5, windowMs: 60000 } }]
  - id: orders
    methods: [GET]
    path: /orders/:id
    upstream: http://127.0.0.1:9
    limits: [{ id: orders-open, kind: concurrency, key: tenant, max: 3 }]
  - id: orders-any
    path: /orders/*
    upstream: http://127.0.0.1:9
    limits: [{ id: orders-shadow, key: tenant+ip, rule: { policy: token_bucket, capacity: 5, refillPerSecond: 1, shadow: true } }]
  - id: search
    path: /search
    caseInsensitive: true
    cost: 3
    upstream: http://127.0.0.1:9
    limits:
      - { id: search-tenant, key: tenant }
      - { id: search-ceiling, key: route, rule: { policy: gcra, capacity: 50, refillPerSecond: 5, shards: 2 } }
tenants:
  keys:
    - { key: key-shop-a-0001, tenant: shop-a }
rules:
  - { tenant: shop-a, route: search, policy: token_bucket, capacity: 30, refillPerSecond: 3 }
defaultRule: { policy: token_bucket, capacity: 20, refillPerSecond: 2 }
clientIp: { trustedProxies: [10.0.0.0/8] }
`;

const KEY = 'X-Api-Key: key-shop-a-0001';

function contextOf(yaml = YAML, rules?: RuleResolver): ExplainContext {
  const config = parseConfig(yaml, { source: 'test.yaml', env: {} });
  const resolvers = resolversFor(config);
  return { config, rules: rules ?? resolvers.rules, tenants: resolvers.tenants, ruleStore: false };
}

const explain = (fields: SampleFields, context = contextOf()): Explanation => explainRequest(context, parseSample({ ip: '192.0.2.1', ...fields }));
const limit = (out: Explanation, id: string) => {
  const found = out.limits.find((entry) => entry.id === id);
  assert.ok(found, `limit ${id} is explained`);
  return found;
};
const route = (out: Explanation, id: string) => out.routes.find((entry) => entry.id === id)!;

describe('explain: which route takes the request, and why each other does not', () => {
  it('method: a route that lists methods and not this one', () => {
    const out = explain({ method: 'GET', path: '/login' });
    assert.equal(route(out, 'login').reason, 'method');
    assert.match(route(out, 'login').why, /GET is not one of POST/);
  });

  it('path: the pattern does not match; the route that takes it is named', () => {
    const out = explain({ path: '/orders/42', header: [KEY] });
    assert.equal(out.route, 'orders');
    assert.equal(route(out, 'orders').matched, true);
    assert.equal(route(out, 'login').reason, 'method');
    assert.equal(route(out, 'search').reason, 'path');
  });

  it('path_case: a case-sensitive route the path matches only ignoring case', () => {
    const out = explain({ path: '/reports', header: [KEY, 'X-User-Id: u1'] });
    assert.equal(route(out, 'Reports').reason, 'path_case');
    assert.equal(out.outcome.status, 404);
    assert.equal(out.outcome.error, 'no_route');
  });

  it('a caseInsensitive route matches whatever the case', () => {
    assert.equal(explain({ path: '/SEARCH', header: [KEY] }).route, 'search');
  });

  it('host: a route for another host, or a request with no Host', () => {
    const other = explain({ path: '/admin/x', host: 'www.example.com', header: [KEY] });
    assert.equal(route(other, 'admin-host').reason, 'host');
    assert.match(route(other, 'admin-host').why, /www.example.com is not admin.example.com/);
    const none = explain({ path: '/admin/x', header: [KEY] });
    assert.match(route(none, 'admin-host').why, /has no Host/);
    assert.equal(explain({ path: '/admin/x', host: 'ADMIN.example.com:8080', header: [KEY] }).route, 'admin-host');
  });

  it('earlier_route: a later route that matches too, but the first declared wins', () => {
    const out = explain({ path: '/orders/42', header: [KEY] });
    assert.equal(route(out, 'orders-any').reason, 'earlier_route');
    assert.match(route(out, 'orders-any').why, /route orders is declared before it/);
  });

  it('the path is matched normalized, as the gateway matches it', () => {
    const out = explain({ path: '/orders/%34%32/../7', header: [KEY] });
    assert.equal(out.request.path, '/orders/7');
    assert.equal(out.route, 'orders');
  });

  it('the route explain names is the one RouteTable.match gives, and the only one marked matched', () => {
    const samples: SampleFields[] = [
      { path: '/orders/42' },
      { path: '/orders/' },
      { path: '/orders/42', method: 'POST' },
      { path: '/SEARCH' },
      { path: '/Reports' },
      { path: '/admin/x', host: 'admin.example.com' },
      { path: '/login', method: 'POST' },
      { path: '/nowhere' },
    ];
    for (const fields of samples) {
      const out = explain({ ...fields, header: [KEY] });
      const matched = out.routes.filter((entry) => entry.matched).map((entry) => entry.id);
      assert.deepEqual(matched, out.route === undefined ? [] : [out.route], JSON.stringify(fields));
    }
  });

  it('refused before routing: a path that cannot be normalized, a lower-case method', () => {
    const path = explain({ path: '/../etc/passwd', header: [KEY] });
    assert.equal(path.outcome.error, 'invalid_path');
    assert.deepEqual(path.routes, []);
    const method = explain({ method: 'get', path: '/orders/1', header: [KEY] });
    assert.equal(method.outcome.error, 'bad_request');
  });
});

describe('explain: which limits apply and which are skipped, and why', () => {
  it('applies: each limit with its key, rule, source and bucket key', () => {
    const out = explain({ path: '/search', header: [KEY] });
    assert.equal(out.outcome.status, 200);
    assert.equal(out.identity.tenant, 'shop-a');
    const own = limit(out, 'search-tenant');
    assert.equal(own.status, 'applies');
    assert.deepEqual(own.key, { tenant: 'shop-a' });
    assert.deepEqual(own.source, { from: 'config', match: 'tenant-route' });
    assert.equal(own.rule?.policy, 'token_bucket');
    assert.deepEqual(own.bucket, { tag: 'shop-a', name: 'search-tenant', redisKey: 'rl:{shop-a}', field: 'search-tenant' });
    const ceiling = limit(out, 'search-ceiling');
    assert.deepEqual(ceiling.source, { from: 'config' });
    assert.equal(ceiling.bucket?.redisKey, 'rl:{~route}');
    assert.deepEqual(ceiling.bucket?.shards, [{ redisKey: 'rl:~route:search-ceiling:0', field: '_' }, { redisKey: 'rl:~route:search-ceiling:1', field: '_' }]);
    const global = limit(out, 'per-tenant-day');
    assert.equal(global.global, true);
  });

  it('default-rule: a tenant-keyed limit no rule matches takes the default rule', () => {
    const yaml = YAML.replace('route: search,', 'route: orders,');
    const own = limit(explain({ path: '/search', header: [KEY] }, contextOf(yaml)), 'search-tenant');
    assert.deepEqual(own.source, { from: 'default-rule' });
  });

  it('rule-store: the rule store cache as the resolver', () => {
    const context = contextOf();
    const own = limit(explainRequest({ ...context, ruleStore: true }, parseSample({ path: '/search', header: [KEY], ip: '192.0.2.1' })), 'search-tenant');
    assert.deepEqual(own.source, { from: 'rule-store', match: 'tenant-route' });
  });

  it('override: a per-key override wins, and its selector is named', () => {
    const context = contextOf();
    const overrides = buildOverrideSet([{ limitId: 'per-ip-global', selector: 'ip:192.0.2.0/24', rule: { policy: 'token_bucket', capacity: 7, refillPerSecond: 1 }, updatedAt: '' }]);
    const rules: RuleResolver = { resolve: (t, r) => context.rules.resolve(t, r), overrides: () => overrides };
    const out = explain({ path: '/search', header: [KEY] }, { ...context, rules });
    const global = limit(out, 'per-ip-global');
    assert.deepEqual(global.source, { from: 'override', selector: 'ip:192.0.2.0/24' });
    assert.equal((global.rule as { capacity: number }).capacity, 7);
  });

  it('anonymous_route: the API key is not read, and a tenant-keyed global limit is skipped', () => {
    const out = explain({ method: 'POST', path: '/login' });
    assert.equal(out.identity.anonymous, true);
    assert.equal(out.outcome.status, 200);
    assert.equal(limit(out, 'login-per-ip').status, 'applies');
    assert.equal(limit(out, 'per-ip-global').status, 'applies');
    const skipped = limit(out, 'per-tenant-day');
    assert.equal(skipped.status, 'skipped');
    assert.equal(skipped.reason, 'anonymous_route');
  });

  it('missing_api_key: 401, every limit of the route skipped', () => {
    const out = explain({ path: '/search' });
    assert.equal(out.outcome.status, 401);
    assert.equal(out.identity.problem, 'missing_api_key');
    assert.ok(out.limits.length > 0 && out.limits.every((entry) => entry.reason === 'missing_api_key'));
  });

  it('missing_api_key before no_route: the key is checked first, as the gateway does', () => {
    const out = explain({ path: '/nowhere' });
    assert.equal(out.outcome.error, 'missing_api_key');
    assert.equal(out.route, undefined);
  });

  it('unknown_api_key: 401 under unknownKeys: reject; the key is shown only as a hash prefix', () => {
    const out = explain({ path: '/search', header: ['X-Api-Key: not-a-key-1234'] });
    assert.equal(out.outcome.error, 'unknown_api_key');
    assert.equal(limit(out, 'search-tenant').reason, 'unknown_api_key');
    assert.match(out.identity.keySha256!, /^[0-9a-f]{12}$/);
    assert.ok(!JSON.stringify(out).includes('not-a-key-1234'));
    assert.ok(!renderText(out).includes('not-a-key-1234'));
  });

  it('an unknown key under unknownKeys: default-rule is a tenant of its own', () => {
    const yaml = YAML.replace('tenants:\n', 'tenants:\n  unknownKeys: default-rule\n');
    const out = explain({ path: '/search', header: ['X-Api-Key: not-a-key-1234'] }, contextOf(yaml));
    assert.equal(out.identity.unknownKey, true);
    assert.match(out.identity.tenant!, /^~[0-9a-f]{32}$/);
    assert.deepEqual(limit(out, 'search-tenant').source, { from: 'default-rule' });
  });

  it('duplicate_api_key: the key header twice', () => {
    const out = explain({ path: '/search', header: [KEY, 'x-api-key: key-shop-a-0001'] });
    assert.equal(out.outcome.error, 'duplicate_api_key');
    assert.equal(limit(out, 'search-tenant').reason, 'duplicate_api_key');
  });

  it('missing_limit_header: a header-keyed limit without its header; the other limits are not decided', () => {
    const out = explain({ path: '/Reports', header: [KEY] });
    assert.equal(out.outcome.status, 400);
    assert.equal(out.outcome.error, 'missing_limit_header');
    assert.equal(limit(out, 'per-user').reason, 'missing_limit_header');
    assert.equal(limit(out, 'per-tenant-day').reason, 'request_refused');
  });

  it('a header-keyed limit is keyed by the value hashed, never the value', () => {
    const out = explain({ path: '/Reports', header: [KEY, 'X-User-Id: alice@example.com'] });
    const user = limit(out, 'per-user');
    assert.match(user.key!.headerHash!, /^~h\.[0-9a-f]{32}$/);
    assert.equal(user.bucket!.redisKey, `rl:{${user.key!.headerHash}}:per-user`, 'the sliding log keeps a key of its own');
    assert.equal(user.bucket!.field, undefined);
    assert.ok(!JSON.stringify(out).includes('alice@example.com'));
  });

  it('no_client_address: an ip-keyed limit and no peer address', () => {
    const out = explainRequest(contextOf(), parseSample({ method: 'POST', path: '/login' }));
    assert.equal(limit(out, 'login-per-ip').reason, 'no_client_address');
    assert.equal(out.outcome.status, 0);
  });

  it('the client address through a trusted proxy: X-Forwarded-For is read only from one', () => {
    const trusted = explain({ method: 'POST', path: '/login', ip: '10.1.2.3', header: ['X-Forwarded-For: 198.51.100.9'] });
    assert.equal(trusted.request.clientIp, '198.51.100.9');
    assert.equal(trusted.request.trustedProxy, true);
    assert.equal(limit(trusted, 'login-per-ip').bucket?.redisKey, 'rl:{~ip.198.51.100.9}');
    const direct = explain({ method: 'POST', path: '/login', ip: '203.0.113.5', header: ['X-Forwarded-For: 198.51.100.9'] });
    assert.equal(direct.request.clientIp, '203.0.113.5');
  });

  it('shadow: counted, never refuses', () => {
    const out = explain({ path: '/orders/', header: [KEY] });
    assert.equal(out.route, 'orders-any');
    const shadow = limit(out, 'orders-shadow');
    assert.equal(shadow.status, 'shadow');
    assert.deepEqual(shadow.key, { tenant: 'shop-a', ip: '192.0.2.1' });
    assert.equal(shadow.bucket?.redisKey, 'rl:{shop-a}~ip.192.0.2.1.orders-shadow');
  });

  it('cost_exceeds_capacity: a stored rule smaller than the route cost (503)', () => {
    const context = contextOf();
    const rules: RuleResolver = { resolve: () => ({ rule: { policy: 'token_bucket', capacity: 2, refillPerSecond: 1 }, match: 'tenant-route', version: '1' }) };
    const out = explain({ path: '/search', header: [KEY] }, { ...context, rules, ruleStore: true });
    assert.equal(limit(out, 'search-tenant').reason, 'cost_exceeds_capacity');
    assert.equal(out.outcome.status, 503);
  });

  it('body_too_large: a Content-Length over limits.maxBodyBytes is refused before the limits', () => {
    const out = explain({ path: '/search', header: [KEY, 'Content-Length: 999999999999'] });
    assert.equal(out.outcome.error, 'body_too_large');
    assert.equal(limit(out, 'search-tenant').reason, 'body_too_large');
  });

  it('concurrency limits: the lease set key', () => {
    const out = explain({ path: '/orders/42', header: [KEY] });
    const open = limit(out, 'orders-open');
    assert.equal(open.kind, 'concurrency');
    assert.equal(open.max, 3);
    assert.equal(open.bucket?.redisKey, 'rl:{shop-a}:orders-open:cc');
  });

  it('renders as text: the verdict, routes, identity and each limit', () => {
    const text = renderText(explain({ path: '/search', header: [KEY] }));
    assert.match(text, /^GET \/search, client 192\.0\.2\.1\n=> 200: decided by 4 limits/);
    assert.match(text, /\+ search: any method \/search matches/);
    assert.match(text, /- login \[method\]: method GET is not one of POST/);
    assert.match(text, /limit search-tenant: applies, counted per tenant \(shop-a\)/);
    assert.match(text, /bucket rl:\{shop-a\} field search-tenant/);
  });
});

describe('explain: the sample is checked, a bad field named', () => {
  for (const [fields, field] of [
    [{ path: 'orders' }, 'path'],
    [{}, 'path'],
    [{ path: '/x', method: 'G E T' }, 'method'],
    [{ path: '/x', ip: 'not-an-ip' }, 'ip'],
    [{ path: '/x', header: ['no colon'] }, 'header[0]'],
  ] as [SampleFields, string][]) {
    it(`${field}: ${JSON.stringify(fields)}`, () => {
      assert.throws(() => parseSample(fields), (error: { field?: string; status?: number }) => error.field === field && error.status === 400);
    });
  }
});
