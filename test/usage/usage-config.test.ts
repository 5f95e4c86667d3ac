// The config of limits priced by usage: bad entries name their field and line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/decision-service/load-config.js';

const route = (limit: string) => `routes:
  - id: chat
    path: /v1/chat
    upstream: http://127.0.0.1:9000
    limits:
      - ${limit}
`;
const fails = (yaml: string, pattern: RegExp) => assert.throws(() => parseConfig(yaml, { source: 'test.yaml', env: {} }), pattern);

describe('usage limits config', () => {
  it('loads cost, count and a body key', () => {
    const config = parseConfig(route('{ id: tpm, key: { body: model }, rule: { policy: token_bucket, capacity: 100, refillPerSecond: 1 }, cost: { estimate: 10, from: { header: X-Usage }, fallback: 5 }, count: { skipStatus: [5xx, 404] } }'), { source: 'test.yaml', env: {} });
    const limit = config.routes[0]!.limits[0]!;
    assert.deepEqual(limit.key, { kind: 'body', field: ['model'] });
    assert.deepEqual(limit.usage, { estimate: { fixed: 10 }, from: { kind: 'header', header: 'x-usage' }, fallback: 5 });
    assert.deepEqual([limit.count?.only, [...limit.count!.statuses], [...limit.count!.classes]], [false, [404], [5]]);
  });

  it('names the field and line of a bad entry', () => {
    fails(route('{ id: tpm, rule: { policy: token_bucket, capacity: 100, refillPerSecond: 1 }, cost: { estimate: 500, from: { json: usage.total_tokens } } }'), /test\.yaml:\d+.*routes\[0\]\.limits\[0\]\.cost\.estimate.*at most 100/s);
    fails(route('{ id: tpm, rule: { policy: token_bucket, capacity: 100, refillPerSecond: 1 }, cost: { estimate: 5, from: { sse: x } } }'), /routes\[0\]\.limits\[0\]\.cost\.from/);
    fails(route('{ id: tpm, rule: { policy: token_bucket, capacity: 100, refillPerSecond: 1 }, count: { status: [700] } }'), /routes\[0\]\.limits\[0\]\.count/);
    fails(route('{ id: cc, kind: concurrency, max: 2, count: { status: [401] } }'), /routes\[0\]\.limits\[0\]\.count.*rate limits only/s);
  });
});
