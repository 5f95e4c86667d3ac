// A limit's `penalty:` in the config file: kept on the limit (a route's and a
// global one), and every bad value refused with its file, line and field.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';

const RULE = '{ policy: fixed_window, limit: 5, windowMs: 60000 }';
const route = (penalty: string, rule = RULE) =>
  `routes:\n  - id: login\n    path: /login\n    upstream: http://127.0.0.1:8090\n    limits:\n      - id: login-ip\n        key: ip\n        rule: ${rule}\n        penalty: ${penalty}\n`;
const parse = (yaml: string) => parseConfig(yaml, { source: 'pb.yaml', env: {} });
const fails = (yaml: string, pattern: RegExp) => assert.throws(() => parse(yaml), (error: unknown) => error instanceof ConfigError && pattern.test(error.message), pattern.source);

describe('penalty: in the config', () => {
  it("is kept on the limit with its defaults; a limit without one has none", () => {
    const config = parse(route('{ after: 5, withinMs: 60000, blockMs: 600000, backoff: 2, maxMs: 86400000 }'));
    assert.deepEqual(config.routes[0]!.limits[0]!.penalty, { after: 5, withinMs: 60000, blockMs: 600000, backoff: 2, maxMs: 86_400_000, forgiveAfterMs: 86_400_000 });
    const global = parse(`${route('{ after: 1, withinMs: 1000, blockMs: 60000 }')}globalLimits:\n  - { id: g, key: ip, rule: ${RULE}, penalty: { after: 3, withinMs: 1000, blockMs: 60000 } }\n`);
    assert.equal(global.globalLimits[0]!.penalty?.after, 3);
    assert.equal(global.routes[0]!.limits[1]!.penalty?.after, 3, "the route enforces the global limit's box too");
    const plain = parse(`routes:\n  - { id: r, path: /r, upstream: http://127.0.0.1:8090, limits: [{ id: r, key: ip, rule: ${RULE} }] }\n`);
    assert.equal(plain.routes[0]!.limits[0]!.penalty, undefined);
  });

  it('names the field and its line: after 0, a block shorter than the window, a bad backoff or max, an unknown field', () => {
    fails(route('{ after: 0, withinMs: 60000, blockMs: 600000 }'), /^pb\.yaml:9: routes\[0\]\.limits\[0\]\.penalty\.after: must be an integer of at least 1/);
    fails(route('{ after: 5, withinMs: 60000, blockMs: 30000 }'), /^pb\.yaml:9: routes\[0\]\.limits\[0\]\.penalty\.blockMs: must be at least the limit's window \(60000 ms\)/);
    fails(route('{ after: 5, withinMs: 60000, blockMs: 600000, backoff: 0.5 }'), /routes\[0\]\.limits\[0\]\.penalty\.backoff: must be a number from 1 to 1000/);
    fails(route('{ after: 5, withinMs: 60000, blockMs: 600000, maxMs: 1000 }'), /routes\[0\]\.limits\[0\]\.penalty\.maxMs: must be at least blockMs/);
    fails(route('{ after: 5, blockMs: 600000 }'), /routes\[0\]\.limits\[0\]\.penalty\.withinMs: must be an integer number of milliseconds/);
    fails(route('{ after: 5, within: 60000, blockMs: 600000 }'), /routes\[0\]\.limits\[0\]\.penalty\.within: unknown field/);
    fails(route('10m'), /routes\[0\]\.limits\[0\]\.penalty: must be an object/);
  });

  it("checks the block against a bucket's refill time, and refuses a box on a leased, sharded or concurrency limit", () => {
    fails(route('{ after: 5, withinMs: 1000, blockMs: 5000 }', '{ policy: token_bucket, capacity: 10, refillPerSecond: 1 }'), /penalty\.blockMs: must be at least the limit's window \(10000 ms\)/);
    fails(route('{ after: 5, withinMs: 1000, blockMs: 60000 }', '{ policy: token_bucket, capacity: 10, refillPerSecond: 1, lease: { batch: 5 } }'), /routes\[0\]\.limits\[0\]\.rule\.lease: cannot be combined with a penalty/);
    fails(route('{ after: 5, withinMs: 1000, blockMs: 60000 }', '{ policy: token_bucket, capacity: 10, refillPerSecond: 1, shards: 4 }'), /routes\[0\]\.limits\[0\]\.rule\.shards: cannot be combined with a penalty/);
    fails(`routes:\n  - { id: r, path: /r, upstream: http://127.0.0.1:8090, limits: [{ id: c, kind: concurrency, key: ip, max: 2, penalty: { after: 1, withinMs: 1000, blockMs: 1000 } }] }\n`, /routes\[0\]\.limits\[0\]\.penalty: applies to rate limits only/);
  });
});
