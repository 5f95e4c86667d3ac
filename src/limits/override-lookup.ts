// The per-key override of one limit for one request, if any: in-memory map
// reads, no I/O. Precedence (docs/limits.md#overrides): the client's exact IP,
// then the longest CIDR holding it, then the tenant, then a header's value;
// the caller falls back to the limit's inline rule and then the rule store's.
// The IP matched is the real address, not its IPv6 bucket prefix: an override
// for one /128 admits that host more, while its bucket stays the /64's.
import type { Rule } from '../core/rule.js';
import type { LimitOverrides, OverrideSet, PrefixTable } from '../rules/override-set.js';
import { ipv4Network, ipv4Number, ipv6Hex, ipv6Key } from '../rules/override-selector.js';
import type { ClientIpResolver } from './client-ip.js';
import type { ParsedIp } from './ip-address.js';
import type { LimitRequest } from './request-limits.js';
import { headerBucketId } from './request-limits.js';
import type { LimitConfig } from './types.js';

export function overrideRule(
  set: OverrideSet | undefined,
  limit: LimitConfig,
  tenant: string | undefined,
  request: LimitRequest,
  clientIp: ClientIpResolver,
): Rule | undefined {
  const entry = set?.byLimit.get(limit.id);
  if (entry === undefined) return undefined;
  const kind = limit.key.kind;
  if ((kind === 'ip' || kind === 'tenant+ip') && (entry.ipv4.lengths.length > 0 || entry.ipv6.lengths.length > 0)) {
    const byIp = ipOverride(entry, clientIp.clientIp(request.socket.remoteAddress, request.headers));
    if (byIp) return byIp;
  }
  if ((kind === 'tenant' || kind === 'tenant+ip') && tenant !== undefined) {
    const byTenant = entry.tenants.get(tenant);
    if (byTenant) return byTenant;
  }
  if (limit.key.kind === 'header' && entry.headers.size > 0) {
    const value = request.headers[limit.key.header];
    if (typeof value === 'string' && value !== '') return entry.headers.get(headerBucketId(value));
  }
  return undefined;
}

/** The override of the longest prefix holding `ip` (an exact address is its /32 or /128). */
function ipOverride(entry: LimitOverrides, ip: ParsedIp | undefined): Rule | undefined {
  if (ip === undefined) return undefined;
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
