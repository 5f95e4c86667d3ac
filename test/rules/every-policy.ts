// A rule of every policy, as both rule stores' schema upgrades are tested with
// (embedded/schema.test.ts, postgres/migrations.int.test.ts): the bucket
// policies with capacity and refill in columns, the others (a leaky bucket
// too) in params.
import type { toColumns } from '../../src/rules/rule-columns.js';

export type StoredRuleInput = Parameters<typeof toColumns>[0];

export const EVERY_POLICY: [string, StoredRuleInput][] = [
  ['tb', { policy: 'token_bucket', capacity: 5, refillPerSecond: 1 }],
  ['gcra', { policy: 'gcra', capacity: 10, refillPerSecond: 0.5, shadow: true }],
  ['fw', { policy: 'fixed_window', limit: 9, windowMs: 1000, onStoreDown: 'open' }],
  ['log', { policy: 'sliding_window_log', limit: 50, windowMs: 1000, lease: { batch: 5 } }],
  ['count', { policy: 'sliding_window_counter', limit: 1000, windowMs: 60_000, shards: 4 }],
  ['leak', { policy: 'leaky_bucket', ratePerSecond: 10, burst: 20, nodelay: true }],
];
