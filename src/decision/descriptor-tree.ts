// A domain's descriptors as a tree, and the reference service's matching:
// entry by entry, an exact `key` + `value` node beats a `value: prefix*` node,
// which beats a key-only node (any value, each its own bucket); the limit is
// the one on the node the last entry lands on. No node: no limit.
import type { Rule } from '../core/rule.js';
import type { UnitName } from './envoy-schema.js';

export interface ConfiguredLimit {
  /** `rate_limit.name`: what `replaces` refers to. */
  readonly name: string | undefined;
  readonly unit: UnitName;
  readonly requestsPerUnit: number;
  /** `unlimited: true`: never limited, never counted. */
  readonly unlimited: boolean;
  /** Names of the limits this one replaces when both match a request. */
  readonly replaces: readonly string[];
  /** The Sluice rules the descriptor is decided by (the fixed window, or `sluice:`). */
  readonly rules: readonly Rule[];
  /** Names the limit in the IETF headers: a valid id. */
  readonly headerId: string;
}

export interface DescriptorNode {
  readonly limit: ConfiguredLimit | undefined;
  readonly children: DescriptorLevel;
}

export interface DescriptorLevel {
  /** `key\0value` → node. */
  readonly exact: Map<string, DescriptorNode>;
  /** `value: prefix*` nodes, in file order. */
  readonly prefixed: { key: string; prefix: string; node: DescriptorNode }[];
  /** Key-only nodes: any value. */
  readonly keyOnly: Map<string, DescriptorNode>;
}

/** domain → its top level. */
export type Domains = ReadonlyMap<string, DescriptorLevel>;

export interface Entry {
  readonly key: string;
  readonly value: string;
}

export const emptyLevel = (): DescriptorLevel => ({ exact: new Map(), prefixed: [], keyOnly: new Map() });

/** The limit a descriptor's entries land on, if any. */
export function findLimit(top: DescriptorLevel, entries: readonly Entry[]): ConfiguredLimit | undefined {
  let level = top;
  for (let i = 0; i < entries.length; i++) {
    const { key, value } = entries[i]!;
    const node = level.exact.get(`${key}\u0000${value}`) ?? prefixMatch(level, key, value) ?? level.keyOnly.get(key);
    if (node === undefined) return undefined;
    if (i === entries.length - 1) return node.limit;
    level = node.children;
  }
  return undefined;
}

function prefixMatch(level: DescriptorLevel, key: string, value: string): DescriptorNode | undefined {
  for (const candidate of level.prefixed) {
    if (candidate.key === key && value.startsWith(candidate.prefix)) return candidate.node;
  }
  return undefined;
}
