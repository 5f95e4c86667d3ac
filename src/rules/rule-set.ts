// An immutable rule set: what the hot path reads. Built once per load or change
// batch and swapped in whole, so a lookup never sees half an update.
import type { Rule } from '../core/rule.js';
import { ruleVersion } from './rule-columns.js';
import type { ApiKeyRecord } from './store.js';
import { ANY, type ResolvedRule, type RuleMatch, type StoredRule } from './types.js';

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
  /** Tenants that own at least one active key: their names are never accepted as keys. */
  readonly keyedTenants: ReadonlySet<string>;
}

const tenantsOf = (keys: ReadonlyMap<string, KeyEntry>): ReadonlySet<string> => new Set(Array.from(keys.values(), (entry) => entry.tenant));

export function matchOf(tenant: string, route: string): RuleMatch {
  if (tenant === ANY) return route === ANY ? 'default' : 'any-route';
  return route === ANY ? 'tenant-any' : 'tenant-route';
}

export function resolvedOf(stored: StoredRule): ResolvedRule {
  return Object.freeze({ rule: stored.rule, match: matchOf(stored.tenant, stored.route), version: ruleVersion(stored.rule) });
}

export function buildRuleSet(rules: StoredRule[], keys: Pick<ApiKeyRecord, 'id' | 'tenant' | 'hash'>[]): RuleSet {
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
  return { rules: resolved, stored, keys: keyMap, keyIds, keyedTenants: tenantsOf(keyMap) };
}

export interface RuleSetChanges {
  rules: Map<string, StoredRule | undefined>; // ruleKey → new value, undefined = deleted
  keys: Map<string, ApiKeyRecord | undefined>; // key id → active record, undefined = gone or revoked
}

/** A new set with `changes` applied; `base` is left as it is. */
export function applyChanges(base: RuleSet, changes: RuleSetChanges): RuleSet {
  let { rules, stored, keys, keyIds, keyedTenants } = base;
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
  if (changes.keys.size > 0) {
    const nextKeys = new Map(keys);
    const nextIds = new Map(keyIds);
    for (const [id, record] of changes.keys) {
      const oldHash = nextIds.get(id);
      if (oldHash !== undefined) nextKeys.delete(oldHash);
      nextIds.delete(id);
      if (record && record.revokedAt === undefined) {
        nextKeys.set(record.hash, { id: record.id, tenant: record.tenant });
        nextIds.set(id, record.hash);
      }
    }
    keys = nextKeys;
    keyIds = nextIds;
    keyedTenants = tenantsOf(nextKeys);
  }
  return { rules, stored, keys, keyIds, keyedTenants };
}

/** The resolved form of the default rule (config's `defaults`). */
export function defaultResolved(rule: Rule): ResolvedRule {
  return Object.freeze({ rule, match: 'default' as const, version: `default-${ruleVersion(rule)}` });
}
