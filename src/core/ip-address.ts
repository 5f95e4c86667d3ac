// Addresses as the limiter keys them: IPv4 as dotted quads, IPv4-mapped IPv6
// as the IPv4 it carries, and IPv6 cut to a prefix (default /64) so that one
// host, which usually owns a whole /64, cannot mint 2^64 buckets. The bucket
// id never holds a `:` (it would move the Redis key's fields) or a zone id.
import { isIPv4, isIPv6 } from 'node:net';
import { derivedId } from './ids.js';

export type IpFamily = 'ipv4' | 'ipv6';

export interface ParsedIp {
  /** The canonical text: dotted quad, or IPv6 as node prints it. */
  address: string;
  family: IpFamily;
}

/**
 * `text` as an address, or undefined when it is not one. Accepts what sockets
 * and proxies write: `::ffff:1.2.3.4` (→ IPv4), `[2001:db8::1]`, `1.2.3.4:8080`,
 * `[2001:db8::1]:443` and a zone id (`fe80::1%eth0`, dropped).
 */
export function parseIp(text: string | undefined): ParsedIp | undefined {
  if (text === undefined) return undefined;
  // What sockets give most of the time, first: `1.2.3.4` and `::ffff:1.2.3.4`.
  if (isIPv4(text)) return { address: text, family: 'ipv4' };
  if (text.startsWith('::ffff:') && isIPv4(text.slice(7))) return { address: text.slice(7), family: 'ipv4' };
  let value = text.trim();
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    if (close === -1) return undefined;
    const rest = value.slice(close + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return undefined;
    value = value.slice(1, close);
  } else if (/^[0-9.]+:\d{1,5}$/.test(value)) {
    value = value.slice(0, value.indexOf(':')); // IPv4 with a port
  }
  const zone = value.indexOf('%');
  if (zone !== -1) value = value.slice(0, zone);
  if (isIPv4(value)) return { address: value, family: 'ipv4' };
  if (!isIPv6(value)) return undefined;
  const mapped = mappedIpv4(value);
  return mapped ? { address: mapped, family: 'ipv4' } : { address: value.toLowerCase(), family: 'ipv6' };
}

/** The IPv4 inside `::ffff:a.b.c.d` (or its hex form `::ffff:7f00:1`), else undefined. */
function mappedIpv4(ipv6: string): string | undefined {
  const groups = ipv6Groups(ipv6);
  if (groups === undefined) return undefined;
  for (let i = 0; i < 5; i++) if (groups[i] !== 0) return undefined;
  if (groups[5] !== 0xffff) return undefined;
  const high = groups[6] ?? 0;
  const low = groups[7] ?? 0;
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded IPv4 tail counts as two). */
export function ipv6Groups(ipv6: string): number[] | undefined {
  let text = ipv6;
  const lastColon = text.lastIndexOf(':');
  const last = text.slice(lastColon + 1);
  if (last.includes('.')) {
    // An embedded IPv4 tail (`::ffff:1.2.3.4`) is two groups written in decimal.
    if (!isIPv4(last)) return undefined;
    const [a = 0, b = 0, c = 0, d = 0] = last.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => Number.parseInt(g, 16)) : []);
  const head = parse(halves[0]);
  const rest = parse(halves[1]);
  const missing = 8 - head.length - rest.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0) || [...head, ...rest].some((g) => !(g >= 0 && g <= 0xffff))) return undefined;
  return [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...rest];
}

/** The most characters an IP bucket id can take for this IPv6 prefix (IPv4: `~ip.255.255.255.255`). */
export function maxIpIdLength(ipv6Prefix: number): number {
  return Math.max('~ip.255.255.255.255'.length, '~ip6.'.length + Math.ceil(ipv6Prefix / 4));
}

/**
 * The bucket id of an address: `~ip.203.0.113.7`, or for IPv6 `~ip6.` and the
 * hex digits of its first `ipv6Prefix` bits (`~ip6.20010db800000001` for a /64).
 */
export function ipBucketId(ip: ParsedIp, ipv6Prefix: number): string {
  if (ip.family === 'ipv4') return derivedId('ip.', ip.address);
  return derivedId('ip6.', ipv6Key(ipv6Hex(ip.address), ipv6Prefix));
}

/** The 32 hex nibbles of an IPv6 address. */
export function ipv6Hex(address: string): string {
  let hex = '';
  for (const group of ipv6Groups(address) ?? []) hex += group.toString(16).padStart(4, '0');
  return hex;
}

/** The nibbles that hold the first `prefix` bits, the bits past the prefix zeroed: bucket ids, override selectors and their lookup all key by it. */
export function ipv6Key(hex: string, prefix: number): string {
  const nibbles = Math.ceil(prefix / 4);
  const spare = nibbles * 4 - prefix; // bits of the last nibble beyond the prefix
  if (spare === 0) return hex.slice(0, nibbles);
  const last = Number.parseInt(hex[nibbles - 1] ?? '0', 16) & (0xf << spare) & 0xf;
  return hex.slice(0, nibbles - 1) + last.toString(16);
}
