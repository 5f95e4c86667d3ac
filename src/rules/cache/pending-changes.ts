// What the rule cache has heard changed and not yet applied: rules, keys,
// overrides, plans, plan assignments and list entries by id, or "everything" (a full reload). A batch reads each pending
// entry back from the store (a notification carries ids, never values); if the
// read fails the entries go back, so nothing heard is ever dropped.
import { isValidId } from '../../core/ids.js';
import { isListEntryId } from '../list-entries.js';
import { canonicalTarget } from '../override-rows.js';
import { overrideKey } from '../override-set.js';
import { assignmentKey } from '../plan-set.js';
import type { PlanSubject } from '../plans.js';
import { ruleKey, type RuleSetChanges, SEP } from '../rule-set.js';
import type { RuleStore, StoreChange } from '../store.js';

export class PendingChanges {
  /** A full reload is due; it covers every entry below. */
  full = false;
  private readonly rules = new Set<string>();
  private readonly keys = new Set<string>();
  private readonly overrides = new Set<string>();
  private readonly plans = new Set<string>();
  private readonly assignments = new Set<string>();
  private readonly lists = new Set<string>();

  add(change: Exclude<StoreChange, { kind: 'disconnected' | 'version' }>): void {
    if (change.kind === 'reload') this.full = true;
    else if (change.kind === 'rule') this.rules.add(ruleKey(change.tenant, change.route));
    else if (change.kind === 'key') this.keys.add(change.id);
    else if (change.kind === 'plan') this.plans.add(change.plan);
    else if (change.kind === 'list') this.lists.add(change.id);
    else if (change.kind === 'assignment') this.assignments.add(assignmentKey(change.subject, change.id));
    else this.overrides.add(overrideKey(change.limitId, change.selector));
  }

  /** Entries waiting (not counting `full`). */
  get size(): number {
    return this.rules.size + this.keys.size + this.overrides.size + this.plans.size + this.assignments.size + this.lists.size;
  }

  /** Drops everything: a full load is about to read it all. */
  clear(): void {
    this.full = false;
    this.rules.clear();
    this.keys.clear();
    this.overrides.clear();
    this.plans.clear();
    this.assignments.clear();
    this.lists.clear();
  }

  /** Takes the pending entries and reads their current values; on failure they are pending again. */
  async fetch(store: RuleStore): Promise<RuleSetChanges> {
    const taken = { rules: [...this.rules], keys: [...this.keys], overrides: [...this.overrides], plans: [...this.plans], assignments: [...this.assignments], lists: [...this.lists] };
    for (const set of [this.rules, this.keys, this.overrides, this.plans, this.assignments, this.lists]) set.clear();
    const changes: RuleSetChanges = { rules: new Map(), keys: new Map(), overrides: new Map(), plans: { plans: new Map(), assignments: new Map() }, lists: new Map() };
    try {
      await Promise.all([
        ...taken.rules.map(async (key) => {
          const [tenant, route] = key.split(SEP) as [string, string];
          changes.rules.set(key, await store.getRule(tenant, route));
        }),
        ...taken.keys.map(async (id) => changes.keys.set(id, await store.getKey(id))),
        ...taken.overrides.map(async (key) => {
          const [limitId, selector] = key.split(SEP) as [string, string];
          // A hand edit's invalid selector is not an outage: that row is never served (override-rows.ts).
          const valid = canonicalTarget(limitId, selector) !== undefined;
          changes.overrides.set(key, valid ? await store.overrides.get(limitId, selector) : undefined);
        }),
        // One plan read whole, however many tenants are on it.
        ...taken.plans.map(async (name) => changes.plans?.plans.set(name, isValidId(name) ? await store.plans.get(name) : undefined)),
        ...taken.assignments.map(async (key) => {
          const [subject, id] = key.split(SEP) as [PlanSubject, string];
          changes.plans?.assignments.set(key, isValidId(id) ? await store.plans.getAssignment(subject, id) : undefined);
        }),
        // An id a hand edit made invalid is never served (list-entries.ts).
        ...taken.lists.map(async (id) => changes.lists?.set(id, isListEntryId(id) ? await store.lists.get(id) : undefined)),
      ]);
    } catch (error) {
      for (const key of taken.rules) this.rules.add(key);
      for (const id of taken.keys) this.keys.add(id);
      for (const key of taken.overrides) this.overrides.add(key);
      for (const name of taken.plans) this.plans.add(name);
      for (const key of taken.assignments) this.assignments.add(key);
      for (const id of taken.lists) this.lists.add(id);
      throw error;
    }
    return changes;
  }
}
