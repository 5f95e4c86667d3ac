// An override's selector: which keys of a limit it applies to. Written as text
// (`tenant:shop-a`, `ip:203.0.113.0/24`, `ip:2001:db8::/48`, `header:~h.<hex>`)
// and kept in one canonical form, so one key can hold only one override: an IP
// without `/len` and the same IP as /32 (or /128) are the same selector, and a
// header's raw value is replaced by the hash its bucket uses before anything
// is stored (the raw value never reaches the store, a log or the snapshot).
import { isIPv4, isIPv6 } from 'node:net';
import { SluiceError } from '../core/errors.js';
import { headerBucketId } from '../core/ids.js';
import { ipv6Hex, ipv6Key, parseIp } from '../core/ip-address.js';
import { assertTenantId } from './anonymous-tenant.js';

export type Selector =
  | { readonly kind: 'tenant'; readonly tenant: string }
  /** `network`: the masked address as a number (IPv4) or its hex nibbles (IPv6), the lookup's map key. */
  | { readonly kind: 'ip'; readonly family: 'ipv4' | 'ipv6'; readonly prefix: number; readonly network: number | string }
  | { readonly kind: 'header'; readonly id: string };

export interface ParsedSelector {
  /** The canonical text: what the store keeps and the admin API answers. */
  readonly text: string;
  readonly selector: Selector;
}

/** Longest selector text the stores take (an IPv6 CIDR fits easily; a header is a fixed-size hash). */
export const MAX_SELECTOR_LENGTH = 128;
const MAX_RAW_HEADER = 1024;
const HEADER_ID = /^~h\.[0-9a-f]{32}$/;

const bad = (message: string, field: string): SluiceError => new SluiceError('ERR_BAD_REQUEST', message, field);

/** `text` as a selector in canonical form; a SluiceError naming `field` when it is not one. */
export function parseSelector(text: unknown, field = 'selector'): ParsedSelector {
  if (typeof text !== 'string') throw bad('must be a string like tenant:ID, ip:ADDRESS[/LEN] or header:VALUE', field);
  const colon = text.indexOf(':');
  const kind = colon === -1 ? '' : text.slice(0, colon);
  const value = text.slice(colon + 1);
  if (kind === 'tenant') {
    assertTenantId(value, field);
    return { text, selector: { kind: 'tenant', tenant: value } };
  }
  if (kind === 'ip') return parseIpSelector(value, field);
  if (kind === 'header') return parseHeaderSelector(value, field);
  throw bad('must start with tenant:, ip: or header:', field);
}

/** A raw header value is hashed as its bucket is (headerBucketId); `~h.<32 hex>` is taken as such a hash already. */
function parseHeaderSelector(value: string, field: string): ParsedSelector {
  if (value === '') throw bad('header: needs the header value (or its ~h. hash)', field);
  if (value.length > MAX_RAW_HEADER) throw bad(`a header value may be at most ${MAX_RAW_HEADER} characters`, field);
  const id = HEADER_ID.test(value) ? value : headerBucketId(value);
  return { text: `header:${id}`, selector: { kind: 'header', id } };
}

function parseIpSelector(value: string, field: string): ParsedSelector {
  const slash = value.indexOf('/');
  const address = slash === -1 ? value : value.slice(0, slash);
  // Strict here (no ports, brackets or zones): an operator's typo must not turn into another address.
  const parsed = isIPv4(address) || isIPv6(address) ? parseIp(address) : undefined;
  if (!parsed) throw bad(`${JSON.stringify(address)} is not an IPv4 or IPv6 address`, field);
  const max = parsed.family === 'ipv4' ? 32 : 128;
  const lengthText = slash === -1 ? String(max) : value.slice(slash + 1);
  const prefix = /^\d{1,3}$/.test(lengthText) ? Number(lengthText) : Number.NaN;
  if (!(prefix >= 0 && prefix <= max)) throw bad(`the prefix length must be 0 to ${max}`, field);
  const exact = parsed.family === 'ipv4' ? ipv4Number(parsed.address) : ipv6Hex(parsed.address);
  const network = parsed.family === 'ipv4' ? ipv4Network(exact as number, prefix) : ipv6Network(exact as string, prefix);
  const canonical = parsed.family === 'ipv4' ? ipv4Text(network as number) : ipv6Text(network as string);
  // 10.1.2.3/8 is most likely a mistake: say which network it would be rather than guess.
  if (network !== exact) throw bad(`host bits are set: did you mean ${canonical}/${prefix}?`, field);
  const text = prefix === max ? `ip:${canonical}` : `ip:${canonical}/${prefix}`;
  return { text, selector: { kind: 'ip', family: parsed.family, prefix, network: keyOf(network, prefix, parsed.family) } };
}

/** The lookup's key for a network of this length: the IPv4 number, or the IPv6 hex nibbles the prefix covers. */
function keyOf(network: number | string, prefix: number, family: 'ipv4' | 'ipv6'): number | string {
  return family === 'ipv4' ? network : ipv6Key(network as string, prefix);
}

export function ipv4Number(address: string): number {
  const [a = 0, b = 0, c = 0, d = 0] = address.split('.').map(Number);
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

/** The first `prefix` bits of an IPv4 address, the rest zero. */
export function ipv4Network(address: number, prefix: number): number {
  return prefix === 0 ? 0 : ((address >>> (32 - prefix)) << (32 - prefix)) >>> 0;
}

const ipv4Text = (n: number): string => `${n >>> 24}.${(n >>> 16) & 0xff}.${(n >>> 8) & 0xff}.${n & 0xff}`;

/** The full 32 nibbles of the network (the key padded with zeros). */
function ipv6Network(hex: string, prefix: number): string {
  return ipv6Key(hex, prefix).padEnd(32, '0');
}

/** RFC 5952 text: lower case, leading zeros dropped, the longest run of two or more zero groups as `::`. */
function ipv6Text(hex: string): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number.parseInt(hex.slice(i * 4, i * 4 + 4), 16).toString(16));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  if (bestStart === -1) return groups.join(':');
  return `${groups.slice(0, bestStart).join(':')}::${groups.slice(bestStart + bestLength).join(':')}`;
}
