// An immutable rule set: what the hot path reads. Built once per load or change
// batch and swapped in whole, so a lookup never sees half an update.
import { type Rule, ruleFingerprint } from '../policies/rule.js';
import type { StoredListEntry } from './list-entries.js';
import { applyListChanges, buildStoredLists, type StoredLists } from './cache/list-state.js';
import type { RulesLogger } from './logger.js';
import { applyOverrideChanges, buildOverrideSet, type OverrideSet } from './override-set.js';
import { applyPlanChanges, EMPTY_PLANS, type PlanSet, type PlanSetChanges, planOf, planRule } from './plan-set.js';
import type { ApiKeyRecord } from './store.js';
import { ANY, type ResolveContext, type ResolvedRule, type RuleMatch, type StoredOverride, type StoredRule } from './types.js';

export const SEP = '\u0000';
export const ruleKey = (tenant: string, route: string): string => `${tenant}${SEP}${route}`;

export interface KeyEntry {
  id: string;
  tenant: string;
}

export interface RuleSet {
  /** tenant\0route → the resolved rule, built once (lookups allocate nothing). */
  readonly rules: ReadonlyMap<string, ResolvedRule>;
  /** The stored rules by the same key, for snapshots and the admin API. */
  readonly stored: ReadonlyMap<string, StoredRule>;
  /** SHA-256 hex of an active key → its id and tenant. */
  readonly keys: ReadonlyMap<string, KeyEntry>;
  /** key id → SHA-256 hex, to drop a revoked key. */
  readonly keyIds: ReadonlyMap<string, string>;
  /** Per-key overrides of limits, indexed for the request path. */
  readonly overrides: OverrideSet;
  /** Plans and who is on which (plan-set.ts). */
  readonly plans: PlanSet;
  /** The store's allow and deny list entries (cache/list-state.ts). */
  readonly lists: StoredLists;
}

/** The one rule lookup, most specific first: tenant × route, tenant × any route, any tenant × route, any × any. */
export function lookupRule(rules: ReadonlyMap<string, ResolvedRule>, tenant: string, route: string): ResolvedRule | undefined {
  if (rules.size === 0) return undefined;
  return rules.get(tenant + SEP + route) ?? rules.get(tenant + SEP + ANY) ?? rules.get(ANY + SEP + route) ?? rules.get(ANY + SEP + ANY);
}

/**
 * The lookup with plans (docs/plans.md#precedence): the tenant's own rule
 * (tenant × route, tenant × any route), then its plan's limit, then the
 * defaults (any tenant × route, any × any); undefined when none matched.
 */
export function lookupWithPlan(set: RuleSet, tenant: string, route: string, context: ResolveContext | undefined): ResolvedRule | undefined {
  const { rules } = set;
  const own = rules.size === 0 ? undefined : (rules.get(tenant + SEP + route) ?? rules.get(tenant + SEP + ANY));
  if (own) return own;
  const plan = planOf(set.plans, tenant, context?.plan);
  const byPlan = plan && planRule(plan, route, context?.limitId);
  if (byPlan) return byPlan;
  return rules.size === 0 ? undefined : (rules.get(ANY + SEP + route) ?? rules.get(ANY + SEP + ANY));
}

export function matchOf(tenant: string, route: string): RuleMatch {
  if (tenant === ANY) return route === ANY ? 'default' : 'any-route';
  return route === ANY ? 'tenant-any' : 'tenant-route';
}

export function resolvedOf(entry: Pick<StoredRule, 'tenant' | 'route' | 'rule'>): ResolvedRule {
  return Object.freeze({ rule: entry.rule, match: matchOf(entry.tenant, entry.route), version: ruleFingerprint(entry.rule) });
}

/** What a rule set is built from besides the rules and keys; each absent part is empty. */
export interface RuleSetParts {
  readonly overrides?: StoredOverride[];
  readonly logger?: RulesLogger | undefined;
  readonly plans?: PlanSet;
  readonly lists?: readonly StoredListEntry[];
}

export function buildRuleSet(rules: StoredRule[], keys: Pick<ApiKeyRecord, 'id' | 'tenant' | 'hash'>[], parts: RuleSetParts = {}): RuleSet {
  const { overrides = [], logger, plans = EMPTY_PLANS, lists = [] } = parts;
  const resolved = new Map<string, ResolvedRule>();
  const stored = new Map<string, StoredRule>();
  for (const rule of rules) {
    const key = ruleKey(rule.tenant, rule.route);
    resolved.set(key, resolvedOf(rule));
    stored.set(key, rule);
  }
  const keyMap = new Map<string, KeyEntry>();
  const keyIds = new Map<string, string>();
  for (const k of keys) {
    keyMap.set(k.hash, { id: k.id, tenant: k.tenant });
    keyIds.set(k.id, k.hash);
  }
  return { rules: resolved, stored, keys: keyMap, keyIds, overrides: buildOverrideSet(overrides, logger), plans, lists: buildStoredLists(lists) };
}

export interface RuleSetChanges {
  rules: Map<string, StoredRule | undefined>; // ruleKey → new value, undefined = deleted
  keys: Map<string, ApiKeyRecord | undefined>; // key id → active record, undefined = gone or revoked
  overrides: Map<string, StoredOverride | undefined>; // overrideKey → new value, undefined = deleted
  plans?: PlanSetChanges;
  lists?: Map<string, StoredListEntry | undefined>; // list entry id → new value, undefined = deleted
}

/** A new set with `changes` applied; `base` is left as it is. */
export function applyChanges(base: RuleSet, changes: RuleSetChanges, logger?: RulesLogger): RuleSet {
  let { rules, stored, keys, keyIds } = base;
  const overrides = applyOverrideChanges(base.overrides, changes.overrides, logger);
  if (changes.rules.size > 0) {
    const nextRules = new Map(rules);
    const nextStored = new Map(stored);
    for (const [key, value] of changes.rules) {
      if (value) {
        nextRules.set(key, resolvedOf(value));
        nextStored.set(key, value);
      } else {
        nextRules.delete(key);
        nextStored.delete(key);
      }
    }
    rules = nextRules;
    stored = nextStored;
  }
  if (changes.keys.size > 0) [keys, keyIds] = applyKeyChanges(keys, keyIds, changes.keys);
  const plans = changes.plans ? applyPlanChanges(base.plans, changes.plans) : base.plans;
  const lists = changes.lists ? applyListChanges(base.lists, changes.lists) : base.lists;
  return { rules, stored, keys, keyIds, overrides, plans, lists };
}

function applyKeyChanges(
  keys: ReadonlyMap<string, KeyEntry>,
  keyIds: ReadonlyMap<string, string>,
  changes: RuleSetChanges['keys'],
): [ReadonlyMap<string, KeyEntry>, ReadonlyMap<string, string>] {
  const nextKeys = new Map(keys);
  const nextIds = new Map(keyIds);
  for (const [id, record] of changes) {
    const oldHash = nextIds.get(id);
    if (oldHash !== undefined) nextKeys.delete(oldHash);
    nextIds.delete(id);
    if (record && record.revokedAt === undefined) {
      nextKeys.set(record.hash, { id: record.id, tenant: record.tenant });
      nextIds.set(id, record.hash);
    }
  }
  return [nextKeys, nextIds];
}

/** The resolved form of the default rule (config's `defaults`). */
export function defaultResolved(rule: Rule): ResolvedRule {
  return Object.freeze({ rule, match: 'default' as const, version: ruleFingerprint(rule) });
}
