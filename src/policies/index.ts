// The policy registry: the list of policies, each one's entry (its model, its
// Lua twin, its rule's schema and what the rest of Sluice asks of it:
// entry.ts). The policy names, the Rule union and the rule parser
// (rule.ts) all follow from this list: a new policy is its folder under
// src/policies/ and one line here.
import type { z as Zod } from 'zod';
import type { PolicyEntry } from './entry.js';
import { fixedWindowPolicy } from './fixed-window/policy.js';
import { gcraPolicy } from './gcra/policy.js';
import { leakyBucketPolicy } from './leaky-bucket/policy.js';
import { slidingWindowCounterPolicy } from './sliding-window-counter/policy.js';
import { slidingWindowLogPolicy } from './sliding-window-log/policy.js';
import { tokenBucketPolicy } from './token-bucket/policy.js';

export type { DecisionWindow, FormField, PolicyEntry } from './entry.js';

/** Every policy, in the order their names are listed to users. */
const ENTRIES = [tokenBucketPolicy, gcraPolicy, fixedWindowPolicy, slidingWindowLogPolicy, slidingWindowCounterPolicy, leakyBucketPolicy] as const;

type Entries = typeof ENTRIES;

/** A rule of any registered policy: the union of each entry's rule, told apart by `policy`. */
export type Rule = Zod.infer<Entries[number]['schema']>;
export type PolicyName = Rule['policy'];
export type RuleOf<P extends PolicyName> = Extract<Rule, { policy: P }>;

/** The names of a tuple of entries, as a tuple. */
type NamesOf<T extends readonly unknown[]> = { readonly [I in keyof T]: T[I] extends { readonly policy: infer P } ? P : never };

/** The policies' names, in the registry's order. */
export const POLICIES = ENTRIES.map((entry) => entry.policy) as unknown as NamesOf<Entries>;

/** Each policy's entry by its name. */
export const POLICY_REGISTRY: Readonly<Record<PolicyName, PolicyEntry<Rule>>> = Object.fromEntries(ENTRIES.map((entry) => [entry.policy, entry])) as Record<
  PolicyName,
  PolicyEntry<Rule>
>;

/** The entry of `rule`'s policy. */
export function policyOf(rule: Rule): PolicyEntry<Rule> {
  const entry = POLICY_REGISTRY[rule.policy];
  if (!entry) throw new Error(`no model registered for policy ${rule.policy}`);
  return entry;
}

/** Whether `name` is a registered policy's. */
export const isPolicyName = (name: unknown): name is PolicyName => typeof name === 'string' && Object.hasOwn(POLICY_REGISTRY, name);
