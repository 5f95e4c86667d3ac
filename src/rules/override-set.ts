// The per-key overrides in memory, indexed for the hot path: per limit id, a
// map per tenant, per header hash, and per IP prefix length (longest first), so
// a lookup costs one map read per key kind plus one per prefix length in use.
// Immutable like the rule set beside it: a change builds a new index, swapped whole.
import type { Rule } from '../policies/rule.js';
import type { RulesLogger } from './logger.js';
import { parseSelector, type Selector } from './override-selector.js';
import type { LimitOverrides, OverrideSet, PrefixTable, StoredOverride } from './types.js';

export type { LimitOverrides, OverrideSet, PrefixTable } from './types.js';

export const overrideKey = (limitId: string, selector: string): string => `${limitId}\u0000${selector}`;

interface Building {
  tenants: Map<string, Rule>;
  headers: Map<string, Rule>;
  ipv4: Map<number, Map<number | string, Rule>>;
  ipv6: Map<number, Map<number | string, Rule>>;
}

/** Indexes `stored`; an entry whose selector no longer parses (a hand edit) is logged and left out. */
export function buildOverrideSet(stored: Iterable<StoredOverride>, logger?: RulesLogger): OverrideSet {
  const building = new Map<string, Building>();
  const kept = new Map<string, StoredOverride>();
  for (const entry of stored) {
    let parsed: ReturnType<typeof parseSelector>;
    try {
      parsed = parseSelector(entry.selector);
    } catch {
      // Only from a hand-edited snapshot; the selector is not logged (it may be a client's address).
      logger?.error({ limit: entry.limitId }, 'skipping an override with an invalid selector');
      continue;
    }
    kept.set(overrideKey(entry.limitId, parsed.text), entry);
    const limit = building.get(entry.limitId) ?? { tenants: new Map(), headers: new Map(), ipv4: new Map(), ipv6: new Map() };
    building.set(entry.limitId, limit);
    add(limit, parsed.selector, entry.rule);
  }
  const byLimit = new Map<string, LimitOverrides>();
  for (const [id, b] of building) byLimit.set(id, { tenants: b.tenants, headers: b.headers, ipv4: prefixTable(b.ipv4), ipv6: prefixTable(b.ipv6) });
  return { byLimit, stored: kept };
}

function add(limit: Building, selector: Selector, rule: Rule): void {
  if (selector.kind === 'tenant') limit.tenants.set(selector.tenant, rule);
  else if (selector.kind === 'header') limit.headers.set(selector.id, rule);
  else {
    const table = selector.family === 'ipv4' ? limit.ipv4 : limit.ipv6;
    const networks = table.get(selector.prefix) ?? new Map<number | string, Rule>();
    table.set(selector.prefix, networks);
    networks.set(selector.network, rule);
  }
}

function prefixTable(byLength: Map<number, Map<number | string, Rule>>): PrefixTable {
  return { lengths: [...byLength.keys()].sort((a, b) => b - a), byLength };
}

/** A new set with `changes` (overrideKey → new value, undefined = deleted) applied; `base` is left as it is. */
export function applyOverrideChanges(base: OverrideSet, changes: ReadonlyMap<string, StoredOverride | undefined>, logger?: RulesLogger): OverrideSet {
  if (changes.size === 0) return base;
  const next = new Map(base.stored);
  for (const [key, value] of changes) {
    if (value) next.set(key, value);
    else next.delete(key);
  }
  // Rebuilt whole: overrides are few next to rules, and a rebuild keeps the index simple.
  return buildOverrideSet(next.values(), logger);
}

export const EMPTY_OVERRIDES: OverrideSet = buildOverrideSet([]);
