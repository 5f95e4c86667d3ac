// A domain's descriptors as a tree, and the reference service's matching:
// entry by entry, an exact `key` + `value` node beats a wildcard `value` (a `*`
// anywhere, the first matching one in file order), which beats a key-only
// node (any value, each its own bucket); the limit is the one on the node the
// last entry lands on. No node: no limit.
import type { Rule } from '../core/rule.js';
import type { UnitName } from './envoy-schema.js';
import { type WildcardParts, wildcardMatch } from './wildcard.js';

export interface ConfiguredLimit {
  /** `rate_limit.name`: what `replaces` refers to. */
  readonly name: string | undefined;
  readonly unit: UnitName;
  readonly requestsPerUnit: number;
  /** `unlimited: true`: never limited, never counted. */
  readonly unlimited: boolean;
  /** `requests_per_unit: 0`: every request refused (OVER_LIMIT), nothing counted. */
  readonly blocked: boolean;
  /** `shadow_mode: true`: decided and counted, answered OK. */
  readonly shadow: boolean;
  /** `quota_mode: true`: over the limit refuses the request only when every quota descriptor of it is over. */
  readonly quotaMode: boolean;
  /** Names of the limits this one replaces when both match a request. */
  readonly replaces: readonly string[];
  /** The Sluice rules the descriptor is decided by (the fixed window, or `sluice:`); none when blocked or unlimited. */
  readonly rules: readonly Rule[];
  /** Names the limit in the IETF headers: a valid id. */
  readonly headerId: string;
  /** detailed_metric: the statistics key is the request's own entries. */
  readonly detailedMetric: boolean;
}

export interface DescriptorNode {
  readonly limit: ConfiguredLimit | undefined;
  readonly children: DescriptorLevel;
  /** Its part of the reference's statistics key: `key` or `key_value` as configured. */
  readonly statSegment: string;
  /** value_to_metric: the statistics key holds the request's value instead. */
  readonly valueToMetric: boolean;
}

export interface WildcardNode {
  readonly key: string;
  /** The configured value, e.g. `files/*`. */
  readonly value: string;
  readonly parts: WildcardParts;
  /** `share_threshold: true`: every value matching shares one bucket. */
  readonly shared: boolean;
  readonly node: DescriptorNode;
}

export interface DescriptorLevel {
  /** `key\0value` → node. */
  readonly exact: Map<string, DescriptorNode>;
  /** Nodes whose value holds a `*`, in file order. */
  readonly wildcards: WildcardNode[];
  /** Key-only nodes: any value. */
  readonly keyOnly: Map<string, DescriptorNode>;
}

/** domain → its top level. */
export type Domains = ReadonlyMap<string, DescriptorLevel>;

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
