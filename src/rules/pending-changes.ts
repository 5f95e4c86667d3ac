// What the rule cache has heard changed and not yet applied: rules, keys and
// overrides by id, or "everything" (a full reload). A batch reads each pending
// entry back from the store (a notification carries ids, never values); if the
// read fails the entries go back, so nothing heard is ever dropped.
import { canonicalTarget } from './override-rows.js';
import { overrideKey } from './override-set.js';
import { ruleKey, type RuleSetChanges, SEP } from './rule-set.js';
import type { RuleStore, StoreChange } from './store.js';

export class PendingChanges {
  /** A full reload is due; it covers every entry below. */
  full = false;
  private readonly rules = new Set<string>();
  private readonly keys = new Set<string>();
  private readonly overrides = new Set<string>();

  add(change: Exclude<StoreChange, { kind: 'disconnected' | 'version' }>): void {
    if (change.kind === 'reload') this.full = true;
    else if (change.kind === 'rule') this.rules.add(ruleKey(change.tenant, change.route));
    else if (change.kind === 'key') this.keys.add(change.id);
    else this.overrides.add(overrideKey(change.limitId, change.selector));
  }

  /** Entries waiting (not counting `full`). */
  get size(): number {
    return this.rules.size + this.keys.size + this.overrides.size;
  }

  /** Drops everything: a full load is about to read it all. */
  clear(): void {
    this.full = false;
    this.rules.clear();
    this.keys.clear();
    this.overrides.clear();
  }

  /** Takes the pending entries and reads their current values; on failure they are pending again. */
  async fetch(store: RuleStore): Promise<RuleSetChanges> {
    const [rules, keys, overrides] = [[...this.rules], [...this.keys], [...this.overrides]];
    this.rules.clear();
    this.keys.clear();
    this.overrides.clear();
    const changes: RuleSetChanges = { rules: new Map(), keys: new Map(), overrides: new Map() };
    try {
      await Promise.all([
        ...rules.map(async (key) => {
          const [tenant, route] = key.split(SEP) as [string, string];
          changes.rules.set(key, await store.getRule(tenant, route));
        }),
        ...keys.map(async (id) => changes.keys.set(id, await store.getKey(id))),
        ...overrides.map(async (key) => {
          const [limitId, selector] = key.split(SEP) as [string, string];
          // A hand edit's invalid selector is not an outage: that row is never served (override-rows.ts).
          const valid = canonicalTarget(limitId, selector) !== undefined;
          changes.overrides.set(key, valid ? await store.overrides.get(limitId, selector) : undefined);
        }),
      ]);
    } catch (error) {
      for (const key of rules) this.rules.add(key);
      for (const id of keys) this.keys.add(id);
      for (const key of overrides) this.overrides.add(key);
      throw error;
    }
    return changes;
  }
}
