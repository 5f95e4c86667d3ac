import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ClientIpResolver, forwardedFor, parseCidr } from '../../src/request-limits/client-ip.js';
import { ipBucketId, ipv6Groups, maxIpIdLength, parseIp } from '../../src/core/ip-address.js';

const xff = (trustedProxies: string[]) => new ClientIpResolver({ trustedProxies, header: 'x-forwarded-for' });
const fwd = (trustedProxies: string[]) => new ClientIpResolver({ trustedProxies, header: 'forwarded' });
const ipOf = (resolver: ClientIpResolver, peer: string, headers: Record<string, string>) => resolver.clientIp(peer, headers)?.address;

describe('parseIp', () => {
  const cases: [string, string | undefined][] = [
    ['203.0.113.7', '203.0.113.7'],
    [' 203.0.113.7 ', '203.0.113.7'],
    ['203.0.113.7:8080', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:cb00:7107', '203.0.113.7'],
    ['[::ffff:203.0.113.7]:443', '203.0.113.7'],
    ['2001:DB8::1', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['[2001:db8::1]:443', '2001:db8::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['::1', '::1'],
    ['unknown', undefined],
    ['_hidden', undefined],
    ['', undefined],
    ['1.2.3', undefined],
    ['1.2.3.256', undefined],
    ['010.1.2.3', undefined],
    ['[2001:db8::1', undefined],
    ['[2001:db8::1]x', undefined],
    ['2001:db8::1::2', undefined],
    ['<script>', undefined],
    ['1.2.3.4, 5.6.7.8', undefined],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${expected ?? 'not an address'}`, () => assert.equal(parseIp(input)?.address, expected));
  }

  it('expands IPv6 into eight groups, embedded IPv4 tails included', () => {
    assert.deepEqual(ipv6Groups('2001:db8::1'), [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]);
    assert.deepEqual(ipv6Groups('::'), [0, 0, 0, 0, 0, 0, 0, 0]);
    assert.deepEqual(ipv6Groups('64:ff9b::192.0.2.33'), [0x64, 0xff9b, 0, 0, 0, 0, 0xc000, 0x0221]);
    assert.deepEqual(ipv6Groups('1:2:3:4:5:6:7:8'), [1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

describe('ipBucketId', () => {
  it('keys IPv4 by the address and IPv6 by its prefix, never with a colon', () => {
    assert.equal(ipBucketId(parseIp('203.0.113.7')!, 64), '~ip.203.0.113.7');
    assert.equal(ipBucketId(parseIp('::ffff:203.0.113.7')!, 64), '~ip.203.0.113.7');
    assert.equal(ipBucketId(parseIp('2001:db8:0:1::17')!, 64), '~ip6.20010db800000001');
    assert.equal(ipBucketId(parseIp('2001:db8:0:1:ffff:ffff:ffff:ffff')!, 64), '~ip6.20010db800000001');
    assert.notEqual(ipBucketId(parseIp('2001:db8:0:2::17')!, 64), ipBucketId(parseIp('2001:db8:0:1::17')!, 64));
    assert.equal(ipBucketId(parseIp('2001:db8::17')!, 128), '~ip6.20010db8000000000000000000000017');
    assert.equal(ipBucketId(parseIp('2001:db8:0:1f::')!, 62), '~ip6.20010db80000001c'); // the last nibble keeps its top 2 bits
    assert.equal(ipBucketId(parseIp('2001:db8::1')!, 48), '~ip6.20010db80000');
  });

  it('never exceeds maxIpIdLength', () => {
    for (const prefix of [1, 32, 48, 64, 100, 128]) {
      assert.ok(ipBucketId(parseIp('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')!, prefix).length <= maxIpIdLength(prefix));
    }
    assert.equal(ipBucketId(parseIp('255.255.255.255')!, 32).length, maxIpIdLength(32));
  });
});

describe('parseCidr', () => {
  it('reads CIDRs and bare addresses, refuses the rest', () => {
    assert.deepEqual(parseCidr('10.0.0.0/8'), ['10.0.0.0', 8, 'ipv4']);
    assert.deepEqual(parseCidr('::1/128'), ['::1', 128, 'ipv6']);
    assert.deepEqual(parseCidr('192.0.2.1'), ['192.0.2.1', 32, 'ipv4']);
    for (const bad of ['10.0.0.0/33', '::1/129', '10.0.0/8', 'localhost', '10.0.0.0/', '10.0.0.0/-1', '10.0.0.0/8/8', '1.2.3.4:80', '']) {
      assert.equal(parseCidr(bad), undefined, bad);
    }
  });
});

describe('ClientIpResolver', () => {
  it('uses the socket address when no proxy is trusted, whatever the client claims', () => {
    const resolver = xff([]);
    assert.equal(ipOf(resolver, '198.51.100.9', { 'x-forwarded-for': '1.1.1.1' }), '198.51.100.9');
    assert.equal(ipOf(resolver, '::ffff:198.51.100.9', {}), '198.51.100.9');
  });

  it('ignores X-Forwarded-For from a peer that is not a trusted proxy', () => {
    const resolver = xff(['10.0.0.0/8']);
    assert.equal(ipOf(resolver, '198.51.100.9', { 'x-forwarded-for': '1.1.1.1' }), '198.51.100.9');
  });

  it('takes the right-most untrusted address behind a chain of trusted proxies', () => {
    const resolver = xff(['10.0.0.0/8', '2001:db8:ffff::/48']);
    // client spoofs 6.6.6.6; the first proxy appends the real address, the second its own peer
    const headers = { 'x-forwarded-for': '6.6.6.6, 203.0.113.7, 10.1.1.1' };
    assert.equal(ipOf(resolver, '10.2.2.2', headers), '203.0.113.7');
    assert.equal(ipOf(resolver, '::ffff:10.2.2.2', headers), '203.0.113.7');
    assert.equal(ipOf(resolver, '2001:db8:ffff::5', { 'x-forwarded-for': '2001:db8:1::9, 10.0.0.1' }), '2001:db8:1::9');
    assert.equal(ipOf(resolver, '10.2.2.2', { 'x-forwarded-for': '[2001:db8:1::9]:4711' }), '2001:db8:1::9');
    assert.equal(ipOf(resolver, '10.2.2.2', { 'x-forwarded-for': '203.0.113.7:5555' }), '203.0.113.7');
  });

  it('takes the left-most address when every hop is trusted', () => {
    assert.equal(ipOf(xff(['10.0.0.0/8']), '10.0.0.3', { 'x-forwarded-for': '10.0.0.1,10.0.0.2' }), '10.0.0.1');
  });

  it('falls back to the nearest trusted hop when a trusted proxy wrote garbage', () => {
    const resolver = xff(['10.0.0.0/8']);
    assert.equal(ipOf(resolver, '10.0.0.3', { 'x-forwarded-for': 'unknown' }), '10.0.0.3');
    assert.equal(ipOf(resolver, '10.0.0.3', { 'x-forwarded-for': '203.0.113.7, garbage, 10.0.0.2' }), '10.0.0.2');
    assert.equal(ipOf(resolver, '10.0.0.3', { 'x-forwarded-for': ',' }), '10.0.0.3');
    assert.equal(ipOf(resolver, '10.0.0.3', { 'x-forwarded-for': '' }), '10.0.0.3');
    assert.equal(ipOf(resolver, '10.0.0.3', { 'x-forwarded-for': 'x'.repeat(10_000) }), '10.0.0.3');
    // garbage the client wrote left of the first trusted hop is never reached
    assert.equal(ipOf(resolver, '10.0.0.3', { 'x-forwarded-for': 'garbage, 203.0.113.7' }), '203.0.113.7');
  });

  it('reads RFC 7239 Forwarded for= when configured, and then ignores X-Forwarded-For', () => {
    const resolver = fwd(['127.0.0.1']);
    const headers = {
      forwarded: 'for=6.6.6.6, for="[2001:db8:cafe::17]:4711";proto=https, For=127.0.0.1;by=10.0.0.1',
      'x-forwarded-for': '7.7.7.7',
    };
    assert.equal(ipOf(resolver, '127.0.0.1', headers), '2001:db8:cafe::17');
    assert.equal(ipOf(resolver, '127.0.0.1', { 'x-forwarded-for': '7.7.7.7' }), '127.0.0.1');
    assert.equal(ipOf(resolver, '127.0.0.1', { forwarded: 'for=_hidden' }), '127.0.0.1');
    assert.equal(ipOf(resolver, '127.0.0.1', { forwarded: 'proto=https' }), '127.0.0.1');
    assert.equal(ipOf(resolver, '127.0.0.1', { forwarded: 'for="203.0.113.7:80"' }), '203.0.113.7');
    // with X-Forwarded-For configured, a client's own Forwarded header is never read
    assert.equal(ipOf(xff(['127.0.0.1']), '127.0.0.1', { forwarded: 'for=6.6.6.6' }), '127.0.0.1');
  });

  it('parses Forwarded elements', () => {
    assert.deepEqual(forwardedFor('for=1.2.3.4;proto=http, by=x, for="[::1]"'), ['1.2.3.4', '', '[::1]']);
  });

  it('has no address for a socket that has none', () => {
    assert.equal(xff([]).clientIp(undefined, {}), undefined);
  });
});
