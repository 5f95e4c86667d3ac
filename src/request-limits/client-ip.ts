// Who the client is, by address. The socket's peer, unless that peer is one of
// the configured trusted proxies: then the right-most address of the
// forwarding header that is not itself a trusted proxy. Entries left of that
// one were written by the client and prove nothing. A header the client sends
// straight to us (peer not trusted) is never read.
import type { IncomingHttpHeaders } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { type ParsedIp, parseIp } from '../core/ip-address.js';

export type ForwardedHeader = 'x-forwarded-for' | 'forwarded';

export interface ClientIpOptions {
  /** CIDRs (or single addresses) of the proxies whose forwarding header is believed. */
  trustedProxies: readonly string[];
  /** Which header those proxies append to; the other one is ignored (a client could have sent it). */
  header: ForwardedHeader;
}

/** `10.0.0.0/8`, `::1/128` or a bare address, as [address, prefix, family]; undefined when malformed. */
export function parseCidr(text: string): [string, number, 'ipv4' | 'ipv6'] | undefined {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const ip = isIP(address) === 0 ? undefined : parseIp(address);
  if (ip === undefined || (slash !== -1 && !/^\d{1,3}$/.test(text.slice(slash + 1)))) return undefined;
  const max = ip.family === 'ipv4' ? 32 : 128;
  const prefix = slash === -1 ? max : Number(text.slice(slash + 1));
  return prefix <= max ? [ip.address, prefix, ip.family] : undefined;
}

export class ClientIpResolver {
  private readonly trusted = new BlockList();
  private readonly anyTrusted: boolean;
  /** The forwarding header read from trusted proxies (the other is never believed). */
  readonly header: ForwardedHeader;

  constructor(options: ClientIpOptions) {
    this.header = options.header;
    for (const cidr of options.trustedProxies) {
      const parsed = parseCidr(cidr);
      if (parsed === undefined) throw new RangeError(`not a CIDR: ${cidr}`);
      this.trusted.addSubnet(...parsed);
    }
    this.anyTrusted = options.trustedProxies.length > 0;
  }

  isTrusted(ip: ParsedIp): boolean {
    return this.anyTrusted && this.trusted.check(ip.address, ip.family);
  }

  /** The client's address; undefined only when the socket has none (it already closed). */
  clientIp(remoteAddress: string | undefined, headers: IncomingHttpHeaders): ParsedIp | undefined {
    const peer = parseIp(remoteAddress);
    if (peer === undefined || !this.isTrusted(peer)) return peer;
    const value = headers[this.header];
    if (typeof value !== 'string' || value === '') return peer;
    const hops = this.header === 'forwarded' ? forwardedFor(value) : value.split(',');
    // Right to left: each trusted hop vouches for the entry to its left.
    let nearest = peer;
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseIp(hops[i]);
      // A trusted proxy wrote something that is not an address (`unknown`, an
      // obfuscated name, garbage): the last address we can vouch for is the proxy
      // that wrote it. Keying by it is safe: no client chooses it.
      if (hop === undefined) return nearest;
      if (!this.isTrusted(hop)) return hop;
      nearest = hop;
    }
    return nearest; // every hop is a trusted proxy: the left-most one is the origin
  }
}

/** The `for=` values of an RFC 7239 `Forwarded` field, one per element; an element without `for=` gives ''. */
export function forwardedFor(value: string): string[] {
  const out: string[] = [];
  for (const element of value.split(',')) {
    let found = '';
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq === -1 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      found = pair.slice(eq + 1).trim();
      if (found.startsWith('"') && found.endsWith('"') && found.length >= 2) found = found.slice(1, -1);
    }
    out.push(found);
  }
  return out;
}
