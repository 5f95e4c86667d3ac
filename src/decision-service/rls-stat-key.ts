// The reference's statistics key of a descriptor (`domain.key_value.key2`),
// as its config's GetLimit builds it: the configured path (`key` for a
// key-only node, the pattern for a wildcard); value_to_metric puts the
// request's value at that level; detailed_metric on the limit makes it the
// request's own entries (a share_threshold wildcard keeping its pattern).
import type { Entry, Match } from './descriptor-tree.js';

const entrySegment = (entry: Entry): string => (entry.value === '' ? entry.key : `${entry.key}_${entry.value}`);

export function statKeyOf(domain: string, entries: readonly Entry[], match: Match): string {
  const shared = match.sharedValues;
  if (match.limit.detailedMetric) {
    const anyShared = shared.some((value) => value !== undefined);
    const segments = entries.map((entry, i) => (shared[i] !== undefined ? `${entry.key}_${shared[i]}` : anyShared ? entrySegment(entry) : `${entry.key}_${entry.value}`));
    return [domain, ...segments].join('.');
  }
  const segments = match.nodes.map((node, i) => (node.valueToMetric && shared[i] === undefined ? entrySegment(entries[i]!) : node.statSegment));
  return [domain, ...segments].join('.');
}

/** An override's key (the reference's descriptorKey): the request's entries. */
export const overrideStatKey = (domain: string, entries: readonly Entry[]): string => `${domain}.${entries.map(entrySegment).join('.')}`;
