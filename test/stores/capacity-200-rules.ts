// One rule per policy whose burst is 200 units and whose refill is slow, for
// the "1,000 concurrent calls on one key" acceptance test.
import { parseRule, type PolicyName, type Rule } from '../../src/policies/rule.js';

const DAY = 24 * 3600 * 1000;

export const CAPACITY_200: Record<PolicyName, Rule> = {
  token_bucket: parseRule({ policy: 'token_bucket', capacity: 200, refillPerSecond: 1 }),
  gcra: parseRule({ policy: 'gcra', capacity: 200, refillPerSecond: 1 }),
  fixed_window: parseRule({ policy: 'fixed_window', limit: 200, windowMs: DAY }),
  sliding_window_log: parseRule({ policy: 'sliding_window_log', limit: 200, windowMs: DAY }),
  sliding_window_counter: parseRule({ policy: 'sliding_window_counter', limit: 200, windowMs: DAY }),
  leaky_bucket: parseRule({ policy: 'leaky_bucket', ratePerSecond: 1, burst: 199, nodelay: true }),
};

/** Units the rule may add back during `ms` of test time (refill or leak); windows of a day add none. */
export function refillDuring(rule: Rule, ms: number): number {
  switch (rule.policy) {
    case 'token_bucket':
    case 'gcra':
      return Math.ceil((rule.refillPerSecond * ms) / 1000);
    case 'leaky_bucket':
      return Math.ceil((rule.ratePerSecond * ms) / 1000);
    default:
      return 0;
  }
}
