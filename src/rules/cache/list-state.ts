// The rule store's list entries in memory, as the hot path reads them: a
// ListSet (prefix table and hash maps) built once per load or per batch of
// changes and swapped in whole with the rule set, never per request.
import { ListSet } from '../../lists/list-set.js';
import type { StoredListEntry } from '../list-entries.js';

export interface StoredLists {
  /** id → entry, for snapshots, the admin API and the next change. */
  readonly entries: ReadonlyMap<string, StoredListEntry>;
  readonly set: ListSet;
}

export function buildStoredLists(entries: readonly StoredListEntry[]): StoredLists {
  if (entries.length === 0) return EMPTY_LISTS;
  return { entries: new Map(entries.map((entry) => [entry.id, entry])), set: new ListSet(entries) };
}

export const EMPTY_LISTS: StoredLists = { entries: new Map(), set: ListSet.EMPTY };

/** A new state with `changes` applied (id → entry, undefined = deleted): the table rebuilt once for the batch. */
export function applyListChanges(base: StoredLists, changes: ReadonlyMap<string, StoredListEntry | undefined>): StoredLists {
  if (changes.size === 0) return base;
  const next = new Map(base.entries);
  for (const [id, entry] of changes) {
    if (entry) next.set(id, entry);
    else next.delete(id);
  }
  return buildStoredLists([...next.values()]);
}
