// The per-key override of one limit for one request, if any: in-memory map
// reads, no I/O. Precedence (docs/limits.md#overrides): the client's exact IP,
// then the longest CIDR holding it, then the tenant, then a header's value;
// the caller falls back to the limit's inline rule and then the rule store's.
// The IP matched is the real address, not its IPv6 bucket prefix: an override
// for one /128 admits that host more, while its bucket stays the /64's.
import type { Rule } from '../core/rule.js';
import type { LimitOverrides, OverrideSet, PrefixTable } from '../rules/override-set.js';
import { ipv4Network, ipv4Number } from '../rules/override-selector.js';
import { type ParsedIp, ipv6Hex, ipv6Key } from '../core/ip-address.js';
import type { LimitConfig } from './types.js';

/** What identifies the request's key for this limit, already worked out for its bucket. */
export interface KeyIdentity {
  readonly tenant: string | undefined;
  /** The client's address (ip and tenant+ip limits). */
  readonly ip?: ParsedIp;
  /** The header value's bucket id (header limits). */
  readonly headerId?: string;
}

export function overrideRule(set: OverrideSet | undefined, limit: LimitConfig, key: KeyIdentity): Rule | undefined {
  const entry = set?.byLimit.get(limit.id);
  if (entry === undefined) return undefined;
  if (key.ip !== undefined && (entry.ipv4.lengths.length > 0 || entry.ipv6.lengths.length > 0)) {
    const byIp = ipOverride(entry, key.ip);
    if (byIp) return byIp;
  }
  const kind = limit.key.kind;
  if ((kind === 'tenant' || kind === 'tenant+ip') && key.tenant !== undefined) {
    const byTenant = entry.tenants.get(key.tenant);
    if (byTenant) return byTenant;
  }
  return key.headerId === undefined ? undefined : entry.headers.get(key.headerId);
}

/** The override of the longest prefix holding `ip` (an exact address is its /32 or /128). */
function ipOverride(entry: LimitOverrides, ip: ParsedIp): Rule | undefined {
  if (ip.family === 'ipv4') {
    const address = ipv4Number(ip.address);
    return longest(entry.ipv4, (prefix) => ipv4Network(address, prefix));
  }
  const hex = ipv6Hex(ip.address);
  return longest(entry.ipv6, (prefix) => ipv6Key(hex, prefix));
}

function longest(table: PrefixTable, networkOf: (prefix: number) => number | string): Rule | undefined {
  for (const prefix of table.lengths) {
    const rule = table.byLength.get(prefix)?.get(networkOf(prefix));
    if (rule) return rule;
  }
  return undefined;
}
