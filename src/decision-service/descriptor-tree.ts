// A domain's descriptors as a tree, and the reference service's matching:
// entry by entry, an exact `key` + `value` node beats a wildcard `value` (a `*`
// anywhere, the first matching one in file order), which beats a key-only
// node (any value, each its own bucket); the limit is the one on the node the
// last entry lands on. No node: no limit.
import type { ConfiguredLimit, DescriptorLevel, DescriptorNode, WildcardNode } from '../config/decision-service.js';
import { wildcardMatch } from './wildcard.js';

export type { ConfiguredLimit, DescriptorLevel, DescriptorNode, Domains, WildcardNode } from '../config/decision-service.js';

export interface Entry {
  readonly key: string;
  readonly value: string;
}

/** What a descriptor matched: the limit, and per entry the wildcard its bucket shares (share_threshold), if any. */
export interface Match {
  readonly limit: ConfiguredLimit;
  readonly sharedValues: readonly (string | undefined)[];
  /** The node each entry landed on. */
  readonly nodes: readonly DescriptorNode[];
}

export const emptyLevel = (): DescriptorLevel => ({ exact: new Map(), wildcards: [], keyOnly: new Map() });

/** The limit a descriptor's entries land on, if any. */
export function findLimit(top: DescriptorLevel, entries: readonly Entry[]): ConfiguredLimit | undefined {
  return matchDescriptor(top, entries)?.limit;
}

export function matchDescriptor(top: DescriptorLevel, entries: readonly Entry[]): Match | undefined {
  let level = top;
  const sharedValues: (string | undefined)[] = [];
  const nodes: DescriptorNode[] = [];
  for (let i = 0; i < entries.length; i++) {
    const { key, value } = entries[i]!;
    const wildcard = level.exact.has(`${key}\u0000${value}`) ? undefined : wildcardOf(level, key, value);
    const node = level.exact.get(`${key}\u0000${value}`) ?? wildcard?.node ?? level.keyOnly.get(key);
    if (node === undefined) return undefined;
    sharedValues.push(wildcard?.shared ? wildcard.value : undefined);
    nodes.push(node);
    if (i === entries.length - 1) return node.limit ? { limit: node.limit, sharedValues, nodes } : undefined;
    level = node.children;
  }
  return undefined;
}

function wildcardOf(level: DescriptorLevel, key: string, value: string): WildcardNode | undefined {
  for (const candidate of level.wildcards) {
    if (candidate.key === key && wildcardMatch(candidate.parts, value)) return candidate;
  }
  return undefined;
}
