// Addresses and networks (CIDRs) to the list entries they carry, looked up by
// one client address. One hash table per prefix length in use, per family: a
// lookup masks the address once per length present (at most 33 for IPv4, 129
// for IPv6) and asks each table, so its cost depends on how many lengths the
// lists use, never on how many entries they hold. A binary trie would cost
// the same per lookup but one object per bit of every entry in memory.
import { ipv6Groups, type ParsedIp, parseIp } from '../core/ip-address.js';

/** A network as the table keys it: its family, prefix length and masked bits. */
export interface ParsedCidr {
  family: 'ipv4' | 'ipv6';
  prefix: number;
  /** IPv4: the masked address as an unsigned 32-bit number; IPv6: the hex nibbles covering the prefix, the bits past it zeroed. */
  bits: number | string;
}

const IPV4_MAPPED_BITS = 96;

/**
 * `203.0.113.0/24`, `2001:db8::/32`, a bare address (/32 or /128), or an
 * IPv4-mapped network (`::ffff:10.0.0.0/104` is `10.0.0.0/8`); undefined when
 * it does not parse. Bits past the prefix are ignored (`10.0.0.1/8` is `10.0.0.0/8`).
 */
export function parseNetwork(text: string): ParsedCidr | undefined {
  const slash = text.indexOf('/');
  const addressText = (slash === -1 ? text : text.slice(0, slash)).trim();
  const prefixText = slash === -1 ? undefined : text.slice(slash + 1).trim();
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  if (addressText.includes('[') || addressText.includes('%') || /^[0-9.]+:\d+$/.test(addressText)) return undefined; // no ports, brackets or zones in a list
  const ip = parseIp(addressText);
  if (ip === undefined) return undefined;
  const mapped = ip.family === 'ipv4' && addressText.includes(':');
  let prefix = prefixText === undefined ? (ip.family === 'ipv4' ? 32 : 128) : Number(prefixText);
  if (mapped && prefixText !== undefined) {
    if (prefix < IPV4_MAPPED_BITS || prefix > 128) return undefined; // a mapped network wider than ::ffff:0:0/96 spans more than IPv4
    prefix -= IPV4_MAPPED_BITS;
  }
  if (prefix > (ip.family === 'ipv4' ? 32 : 128)) return undefined;
  return { family: ip.family, prefix, bits: maskedBits(ip, prefix) };
}

/** The address's bits under a prefix, as the table keys them. */
function maskedBits(ip: ParsedIp, prefix: number): number | string {
  if (ip.family === 'ipv4') return maskIpv4(ipv4Number(ip.address), prefix);
  return maskIpv6(ipv6Nibbles(ip.address), prefix);
}

function ipv4Number(address: string): number {
  const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

function maskIpv4(value: number, prefix: number): number {
  return prefix === 0 ? 0 : (value & (0xffffffff << (32 - prefix))) >>> 0;
}

function ipv6Nibbles(address: string): string {
  let hex = '';
  for (const group of ipv6Groups(address) ?? []) hex += group.toString(16).padStart(4, '0');
  return hex;
}

/** The nibbles that hold the first `prefix` bits, the bits past it zeroed (each length has its own table, so keys need no padding). */
function maskIpv6(hex: string, prefix: number): string {
  const whole = prefix >> 2;
  const spare = prefix & 3;
  let out = hex.slice(0, whole);
  if (spare !== 0) out += (Number.parseInt(hex[whole] ?? '0', 16) & (0xf << (4 - spare)) & 0xf).toString(16);
  return out;
}

/** What a lookup finds: each network holding the address, longest prefix first, with what it carries. */
export interface PrefixMatch<T> {
  family: 'ipv4' | 'ipv6';
  prefix: number;
  values: readonly T[];
}

class FamilyTable<T> {
  private readonly byLength = new Map<number, Map<number | string, T[]>>();
  private lengths: number[] = []; // longest first

  add(cidr: ParsedCidr, value: T): void {
    let table = this.byLength.get(cidr.prefix);
    if (table === undefined) {
      table = new Map();
      this.byLength.set(cidr.prefix, table);
      this.lengths = [...this.byLength.keys()].sort((a, b) => b - a);
    }
    const bucket = table.get(cidr.bits);
    if (bucket === undefined) table.set(cidr.bits, [value]);
    else bucket.push(value);
  }

  visit(family: 'ipv4' | 'ipv6', full: number | string, found: (match: PrefixMatch<T>) => void): void {
    for (const prefix of this.lengths) {
      const bits = typeof full === 'number' ? maskIpv4(full, prefix) : maskIpv6(full, prefix);
      const values = this.byLength.get(prefix)?.get(bits);
      if (values !== undefined) found({ family, prefix, values });
    }
  }
}

/** Networks of both families to values; an address is looked up in its own family (an IPv4-mapped IPv6 one as IPv4). */
export class PrefixTable<T> {
  private readonly v4 = new FamilyTable<T>();
  private readonly v6 = new FamilyTable<T>();
  private count = 0;

  add(cidr: ParsedCidr, value: T): void {
    (cidr.family === 'ipv4' ? this.v4 : this.v6).add(cidr, value);
    this.count++;
  }

  get size(): number {
    return this.count;
  }

  /** Calls `found` with every network holding `ip`, longest prefix first. */
  visit(ip: ParsedIp, found: (match: PrefixMatch<T>) => void): void {
    if (this.count === 0) return;
    if (ip.family === 'ipv4') this.v4.visit('ipv4', ipv4Number(ip.address), found);
    else this.v6.visit('ipv6', ipv6Nibbles(ip.address), found);
  }

  /** Every network holding `ip`, longest prefix first. */
  matches(ip: ParsedIp): PrefixMatch<T>[] {
    const out: PrefixMatch<T>[] = [];
    this.visit(ip, (match) => out.push(match));
    return out;
  }
}
