// The debug listener's /rlconfig: every configured limit, one line each, in
// the reference's words (`domain.key_value: unit=MINUTE requests_per_unit=2, shadow_mode: false`).
import type { DescriptorLevel, DescriptorNode, Domains } from '../descriptor-tree.js';

export function dumpDomains(domains: Domains): string {
  let out = '';
  for (const [domain, level] of domains) out += dumpLevel(level, domain);
  return out;
}

function dumpLevel(level: DescriptorLevel, parentKey: string): string {
  const nodes: [string, DescriptorNode][] = [
    ...[...level.exact].map(([key, node]): [string, DescriptorNode] => [key.replace('\u0000', '_'), node]),
    ...level.wildcards.map((wildcard): [string, DescriptorNode] => [`${wildcard.key}_${wildcard.value}`, wildcard.node]),
    ...level.keyOnly,
  ];
  let out = '';
  for (const [key, node] of nodes) {
    const fullKey = `${parentKey}.${key}`;
    const limit = node.limit;
    if (limit) out += `${fullKey}: unit=${limit.unlimited ? 'UNKNOWN' : limit.unit.toUpperCase()} requests_per_unit=${limit.requestsPerUnit}, shadow_mode: ${limit.shadow}\n`;
    out += dumpLevel(node.children, fullKey);
  }
  return out;
}
