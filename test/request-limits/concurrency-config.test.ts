// `kind: concurrency` limits in the config file: defaults, the route's slots
// and their keys, and an error naming the field (with its line) for each
// thing that cannot work.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';

const route = (limits: string, extra = '') => `routes:\n  - id: feed\n    path: /feed\n    upstream: http://127.0.0.1:8090\n${extra}    limits: ${limits}\n`;
const parse = (yaml: string) => parseConfig(yaml, { source: 'cc.yaml', env: {} });
const fails = (yaml: string, pattern: RegExp) => assert.throws(() => parse(yaml), (error: unknown) => error instanceof ConfigError && pattern.test(error.message), pattern.source);

describe('kind: concurrency in the config', () => {
  it('is kept apart from the rate limits, with its defaults (lease TTL 30 s, fallback when the store is down)', () => {
    const config = parse(route('[{ id: feed-cc, kind: concurrency, key: ip, max: 3 }, { id: feed-rate, key: ip, rule: { policy: gcra, capacity: 5, refillPerSecond: 1 } }]'));
    const [only] = config.routes;
    assert.deepEqual(only!.limits.map((limit) => limit.id), ['feed-rate']);
    assert.deepEqual(only!.concurrency, [{ id: 'feed-cc', key: { kind: 'ip' }, max: 3, leaseTtlMs: 30_000, onStoreDown: 'fallback' }]);
    const own = parse(route('[{ id: c2, kind: concurrency, key: { header: X-User }, max: 1, leaseTtlMs: 5000, onStoreDown: closed }]'));
    assert.deepEqual(own.routes[0]!.concurrency, [{ id: 'c2', key: { kind: 'header', header: 'x-user' }, max: 1, leaseTtlMs: 5000, onStoreDown: 'closed' }]);
    assert.deepEqual(own.routes[0]!.limits, [], 'a route may list concurrency limits only');
  });

  it('names the field: max not a positive integer, missing, or too large; a bad TTL or onStoreDown', () => {
    fails(route('[{ id: c, kind: concurrency, max: 0 }]'), /cc\.yaml:5: routes\[0\]\.limits\[0\]\.max: must be a positive integer/);
    fails(route('[{ id: c, kind: concurrency, max: 1.5 }]'), /routes\[0\]\.limits\[0\]\.max: must be a positive integer/);
    fails(route('[{ id: c, kind: concurrency, max: "3" }]'), /routes\[0\]\.limits\[0\]\.max: must be a number/);
    fails(route('[{ id: c, kind: concurrency, max: 100001 }]'), /routes\[0\]\.limits\[0\]\.max: must be at most 100000/);
    fails(route('[{ id: c, kind: concurrency }]'), /routes\[0\]\.limits\[0\]\.max: is required with kind: concurrency/);
    fails(route('[{ id: c, kind: concurrency, max: 2, leaseTtlMs: 10 }]'), /routes\[0\]\.limits\[0\]\.leaseTtlMs: must be at least 1000/);
    fails(route('[{ id: c, kind: concurrency, max: 2, onStoreDown: maybe }]'), /routes\[0\]\.limits\[0\]\.onStoreDown: must be fallback, open or closed/);
    fails(route('[{ id: c, kind: parallel, max: 2 }]'), /routes\[0\]\.limits\[0\]\.kind: must be rate or concurrency/);
  });

  it('names the field when a concurrency limit carries a rule, a rate limit carries max, or the key cannot apply', () => {
    fails(route('[{ id: c, kind: concurrency, max: 2, rule: { policy: gcra, capacity: 1, refillPerSecond: 1 } }]'), /routes\[0\]\.limits\[0\]\.rule: a concurrency limit has no rule/);
    fails(route('[{ id: r, key: ip, max: 2, rule: { policy: gcra, capacity: 1, refillPerSecond: 1 } }]'), /routes\[0\]\.limits\[0\]\.max: applies to kind: concurrency only/);
    fails(route('[{ id: c, kind: concurrency, key: tenant, max: 2 }]', '    anonymous: true\n'), /routes\[0\]\.limits\[0\]\.key: tenant cannot key a limit of an anonymous route/);
    fails(route('[{ id: c, kind: concurrency, max: 2 }, { id: c, kind: concurrency, max: 3 }]'), /routes\[0\]\.limits\[1\]\.id: duplicate limit id c/);
    fails(`${route('[{ id: c, kind: concurrency, max: 2 }]')}globalLimits: [{ id: g, kind: concurrency, max: 2 }]\n`, /globalLimits\[0\]\.kind: concurrency applies to a route's limits only/);
  });
});
