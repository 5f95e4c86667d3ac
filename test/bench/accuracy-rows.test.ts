// The accuracy bench's exact figure follows the instants the requests actually
// happened: a run a loaded machine stretched past its schedule is judged on
// what a single exact bucket would have admitted at those instants.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InstanceCounts } from '../../bench/lib/accuracy-plan.js';
import { rowOf, tenantsOf, type Variant } from '../../bench/lib/accuracy-rows.js';
import { parseRule } from '../../src/policies/rule.js';

const T0 = 1_700_000_000_000;
const variant: Variant = {
  name: 'spread K=1',
  group: 'spread',
  k: 1,
  policy: 'token_bucket',
  rule: parseRule({ policy: 'token_bucket', capacity: 100, refillPerSecond: 100 }),
  tenants: 1,
  ratePerTenant: 400,
  allOnOne: false,
  skewed: false,
};

/** 4,000 requests scheduled over 10 s but sent evenly over `spanMs`. */
function counts(spanMs: number, allowed: number): InstanceCounts {
  const sentAt = Array.from({ length: 4000 }, (_, n) => T0 + (n * spanMs) / 3999);
  return { variant: variant.name, sent: 4000, sentAt: [sentAt], decidedAt: [sentAt.map((t) => t + 1)], allowed, bySource: { redis: 4000 } };
}

describe('accuracy bench rows', () => {
  it('a run stretched to 20 s expects capacity + rate × 20 s, not the 10 s schedule', () => {
    const row = rowOf(variant, [counts(20_000, 2100)], T0, 10_000);
    assert.equal(row.scheduled, 1100);
    assert.equal(row.spanMs, 20_000);
    assert.ok(Math.abs(row.expected - 2100) <= 1, `expected ${row.expected}`);
    assert.equal(row.expectedFrom, 'sent');
    assert.equal(row.withinBound, true);
    assert.equal(rowOf(variant, [counts(20_000, 2200)], T0, 10_000).withinBound, false, 'an over-admission of 5 % still misses');
  });

  it("uses Redis's own instants when Redis saw every request once, the send times otherwise", () => {
    const sent = counts(10_000, 1100);
    const tenant = tenantsOf(variant)[0]!;
    // Redis ran every script 50 ms late and spread over 9 s: its instants decide.
    const atRedis = sent.sentAt[0]!.map((t) => T0 + 50 + ((t - T0) * 9) / 10);
    const row = rowOf(variant, [sent], T0, 10_000, new Map([[tenant, atRedis]]));
    assert.equal(row.expectedFrom, 'Redis');
    assert.ok(Math.abs(row.expected - 1000) <= 1, `expected ${row.expected}`);
    const partial = rowOf(variant, [sent], T0, 10_000, new Map([[tenant, atRedis.slice(1)]]));
    assert.equal(partial.expectedFrom, 'sent');
  });
});
