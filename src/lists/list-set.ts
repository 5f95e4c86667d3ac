// The lists of one moment, compiled for lookup: networks in a prefix table
// (cost bounded by the prefix lengths in use, not the entry count), tenants,
// header values and claim values in hash maps. A request gets one verdict:
// the most specific matching entry wins (a tenant, header or claim entry names
// one caller, so it beats any network; among networks the longer prefix), and
// at equal specificity deny wins. Limit-scoped allows do not compete: each one
// that matches lifts its limit, unless the request is denied.
import { createHash } from 'node:crypto';
import { claimText } from '../core/claims.js';
import { type ParsedCidr, parseNetwork, PrefixTable } from './prefix-table.js';
import type { ListEntry, ListQuery, ListVerdict } from './types.js';

/** How list entries keep a header's or a claim's value: its SHA-256, never the value. */
export function listValueHash(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

const IDENTITY_SPECIFICITY = 1_000; // above any network's
const NONE: ListVerdict = Object.freeze({ action: undefined, exemptLimits: new Set<string>() });

function keyedMap(): Map<string, Map<string, ListEntry[]>> {
  return new Map();
}

function push<K>(map: Map<K, ListEntry[]>, key: K, entry: ListEntry): void {
  const found = map.get(key);
  if (found === undefined) map.set(key, [entry]);
  else found.push(entry);
}

/** The best verdict so far: its action and how specific its entry was. */
export interface Best {
  action: ListVerdict['action'];
  specificity: number;
  exempt: Set<string> | undefined;
}

export class ListSet {
  private readonly networks = new PrefixTable<ListEntry>();
  private readonly tenants = new Map<string, ListEntry[]>();
  private readonly headers = keyedMap();
  private readonly claims = keyedMap();
  readonly size: number;

  /** Entries whose CIDR does not parse are refused before they get here (config and admin API); one that still does not is thrown. */
  constructor(entries: readonly ListEntry[]) {
    for (const entry of entries) this.add(entry);
    this.size = entries.length;
  }

  static readonly EMPTY = new ListSet([]);

  private add(entry: ListEntry): void {
    const { match } = entry;
    switch (match.kind) {
      case 'cidr': {
        const cidr: ParsedCidr | undefined = parseNetwork(match.cidr);
        if (cidr === undefined) throw new RangeError(`list entry ${entry.id}: not a CIDR`);
        this.networks.add(cidr, entry);
        return;
      }
      case 'tenant':
        push(this.tenants, match.tenant, entry);
        return;
      case 'header':
        push(this.inner(this.headers, match.header.toLowerCase()), match.valueHash, entry);
        return;
      case 'claim':
        push(this.inner(this.claims, match.claim), match.valueHash, entry);
        return;
    }
  }

  private inner(outer: Map<string, Map<string, ListEntry[]>>, name: string): Map<string, ListEntry[]> {
    let found = outer.get(name);
    if (found === undefined) {
      found = new Map();
      outer.set(name, found);
    }
    return found;
  }

  /** The verdict for one request (see the header comment for who wins). */
  check(query: ListQuery): ListVerdict {
    if (this.size === 0) return NONE;
    const best = newBest();
    this.collect(best, query);
    return verdictOf(best);
  }

  /** Weighs this set's matching entries into `best`: the order sets are asked in does not change the verdict. */
  collect(best: Best, query: ListQuery): void {
    if (this.size === 0) return;
    if (query.tenant !== undefined) this.consider(best, this.tenants.get(query.tenant), IDENTITY_SPECIFICITY, query);
    for (const [name, values] of this.headers) {
      const value = query.headers[name];
      if (typeof value === 'string' && value !== '') this.consider(best, values.get(listValueHash(value)), IDENTITY_SPECIFICITY, query);
    }
    for (const [name, values] of this.claims) {
      const value = claimText(query.claims, name);
      if (value !== undefined) this.consider(best, values.get(listValueHash(value)), IDENTITY_SPECIFICITY, query);
    }
    if (this.networks.size > 0) {
      const ip = query.ip?.();
      // An IPv4 /32 and an IPv6 /128 both name one address: IPv4 prefixes count 96 bits more.
      if (ip !== undefined) this.networks.visit(ip, (found) => this.consider(best, found.values, found.prefix + (found.family === 'ipv4' ? 96 : 0), query));
    }
  }

  private consider(best: Best, entries: readonly ListEntry[] | undefined, specificity: number, query: ListQuery): void {
    if (entries === undefined) return;
    for (const entry of entries) {
      if (!applies(entry, query)) continue;
      if (entry.limit !== undefined) {
        best.exempt ??= new Set();
        best.exempt.add(entry.limit);
        continue;
      }
      if (specificity > best.specificity || (specificity === best.specificity && entry.action === 'deny')) {
        best.action = entry.action;
        best.specificity = specificity;
      }
    }
  }
}

const newBest = (): Best => ({ action: undefined, specificity: -1, exempt: undefined });

function verdictOf(best: Best): ListVerdict {
  if (best.action === undefined && best.exempt === undefined) return NONE;
  return { action: best.action, exemptLimits: best.exempt ?? NONE.exemptLimits };
}

/** What the gateway and the decision service ask: one set, or several read as one. */
export interface ListChecker {
  check(query: ListQuery): ListVerdict;
}

/**
 * Lists from several sources (the config file's, the rule store's) read as one
 * set: the most specific entry of any wins, deny at a tie, as within one set.
 * Each source is asked for its current set per request (a swap, never a rebuild).
 */
export class CombinedLists implements ListChecker {
  constructor(private readonly sources: readonly (() => ListSet)[]) {}

  check(query: ListQuery): ListVerdict {
    const best = newBest();
    for (const source of this.sources) source().collect(best, query);
    return verdictOf(best);
  }
}

/** Not expired, and scoped to this route (or to every route). */
function applies(entry: ListEntry, query: ListQuery): boolean {
  if (entry.expiresAt !== undefined && entry.expiresAt <= query.now) return false;
  return entry.routes === undefined || entry.routes.includes(query.route);
}
