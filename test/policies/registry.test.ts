// The registry is the list of policies: the names, the parser and each
// capability the rest of Sluice asks follow from its entries, so each entry
// must agree with itself (its name, its model's, its schema's) and the
// capabilities must say what the policies do.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { POLICIES, POLICY_REGISTRY, policyOf } from '../../src/policies/index.js';
import { capacityOf, parseRule, type Rule } from '../../src/policies/rule.js';

const EXAMPLES: Record<(typeof POLICIES)[number], Rule> = {
  token_bucket: { policy: 'token_bucket', capacity: 5, refillPerSecond: 1 },
  gcra: { policy: 'gcra', capacity: 6, refillPerSecond: 1 },
  fixed_window: { policy: 'fixed_window', limit: 7, windowMs: 1000 },
  sliding_window_log: { policy: 'sliding_window_log', limit: 8, windowMs: 1000 },
  sliding_window_counter: { policy: 'sliding_window_counter', limit: 9, windowMs: 1000 },
  leaky_bucket: { policy: 'leaky_bucket', ratePerSecond: 1, burst: 9 },
};

describe('the policy registry', () => {
  it('lists each policy once, under the name its model and its schema carry', () => {
    assert.deepEqual(Object.keys(POLICY_REGISTRY), [...POLICIES]);
    for (const policy of POLICIES) {
      const entry = POLICY_REGISTRY[policy];
      assert.equal(entry.policy, policy);
      assert.equal(entry.model.policy, policy);
      assert.equal(entry.schema.safeParse(EXAMPLES[policy]).success, true, policy);
      const other = POLICIES.find((name) => name !== policy)!;
      assert.equal(entry.schema.safeParse({ ...EXAMPLES[policy], policy: other }).success, false, `${policy}'s schema takes ${other}`);
    }
  });

  it('parses a rule of each policy with its own schema, and refuses a name it does not hold', () => {
    for (const policy of POLICIES) assert.deepEqual(parseRule(EXAMPLES[policy]), EXAMPLES[policy]);
    assert.throws(() => parseRule({ policy: 'toString', limit: 1 }), /unknown policy "toString"; expected one of token_bucket, gcra, fixed_window/);
  });

  it("says each policy's capacity, whether it leases, takes calendar windows, and how the fallback trusts a window", () => {
    assert.deepEqual(
      POLICIES.map((policy) => capacityOf(EXAMPLES[policy])),
      [5, 6, 7, 8, 9, 10],
    );
    assert.deepEqual(POLICIES.filter((policy) => !POLICY_REGISTRY[policy].leasable), ['leaky_bucket']);
    assert.deepEqual(POLICIES.filter((policy) => POLICY_REGISTRY[policy].calendarWindows), ['fixed_window']);
    assert.deepEqual(POLICIES.filter((policy) => POLICY_REGISTRY[policy].slidingWindow), ['sliding_window_log', 'sliding_window_counter']);
    assert.deepEqual(POLICIES.filter((policy) => POLICY_REGISTRY[policy].decisionWindow !== undefined), ['fixed_window']);
  });

  it("gives a calendar window's current length, and none for a window that does not change", () => {
    const calendar = parseRule({ policy: 'fixed_window', limit: 5, calendar: { unit: 'month', timeZone: 'UTC' } });
    assert.equal(policyOf(calendar).currentWindowMs?.(calendar, Date.UTC(2025, 1, 10)), 28 * 86_400_000);
    assert.equal(policyOf(calendar).currentWindowMs?.(calendar, Date.UTC(2025, 2, 10)), 31 * 86_400_000);
    assert.equal(policyOf(EXAMPLES.fixed_window).currentWindowMs?.(EXAMPLES.fixed_window, 0), undefined);
  });
});
