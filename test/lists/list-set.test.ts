import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseIp } from '../../src/core/ip-address.js';
import { CombinedLists, ListSet, listValueHash } from '../../src/lists/list-set.js';
import { parseNetwork, PrefixTable } from '../../src/lists/prefix-table.js';
import type { ListEntry, ListQuery } from '../../src/lists/types.js';

let n = 0;
const cidr = (action: ListEntry['action'], text: string, extra: Partial<ListEntry> = {}): ListEntry => ({ id: `e${n++}`, action, match: { kind: 'cidr', cidr: text }, ...extra });
const query = (address: string, extra: Partial<ListQuery> = {}): ListQuery => ({ route: 'orders', headers: {}, now: 1_000, ip: () => parseIp(address), ...extra });
const verdict = (entries: ListEntry[], address: string, extra: Partial<ListQuery> = {}) => new ListSet(entries).check(query(address, extra)).action;

describe('parseNetwork', () => {
  it('reads IPv4, IPv6, bare addresses and IPv4-mapped networks', () => {
    assert.deepEqual(parseNetwork('203.0.113.0/24'), { family: 'ipv4', prefix: 24, bits: 0xcb007100 });
    assert.deepEqual(parseNetwork('203.0.113.9'), { family: 'ipv4', prefix: 32, bits: 0xcb007109 });
    assert.equal(parseNetwork('2001:db8::/32')?.prefix, 32);
    assert.equal(parseNetwork('2001:db8::1')?.prefix, 128);
    assert.deepEqual(parseNetwork('::ffff:10.0.0.0/104'), { family: 'ipv4', prefix: 8, bits: 0x0a000000 });
    assert.deepEqual(parseNetwork('::ffff:10.1.2.3'), { family: 'ipv4', prefix: 32, bits: 0x0a010203 });
    assert.equal(parseNetwork('0.0.0.0/0')?.prefix, 0);
    assert.equal(parseNetwork('::/0')?.prefix, 0);
  });

  it('ignores host bits past the prefix', () => {
    assert.deepEqual(parseNetwork('10.9.8.7/8'), parseNetwork('10.0.0.0/8'));
    assert.deepEqual(parseNetwork('2001:db8:ffff::1/33'), parseNetwork('2001:db8:8000::/33'));
  });

  it('refuses what is not a network', () => {
    for (const bad of ['', '10.0.0.0/33', '::/129', '10.0.0/8', 'example.com', '10.0.0.0/-1', '10.0.0.0/x', '::ffff:10.0.0.0/95', '1.2.3.4:80', '[::1]', 'fe80::1%eth0', '300.1.1.1']) {
      assert.equal(parseNetwork(bad), undefined, bad);
    }
  });
});

describe('PrefixTable', () => {
  it('finds every network holding an address, longest first, per family', () => {
    const table = new PrefixTable<string>();
    for (const text of ['0.0.0.0/0', '10.0.0.0/8', '10.1.0.0/16', '10.1.2.3/32', '::/0', '2001:db8::/32', '2001:db8::1/128']) table.add(parseNetwork(text)!, text);
    assert.deepEqual([...table.matches(parseIp('10.1.2.3')!)].map((m) => m.values[0]), ['10.1.2.3/32', '10.1.0.0/16', '10.0.0.0/8', '0.0.0.0/0']);
    assert.deepEqual([...table.matches(parseIp('11.0.0.1')!)].map((m) => m.values[0]), ['0.0.0.0/0']);
    assert.deepEqual([...table.matches(parseIp('2001:db8::1')!)].map((m) => m.values[0]), ['2001:db8::1/128', '2001:db8::/32', '::/0']);
    assert.deepEqual([...table.matches(parseIp('2001:db9::1')!)].map((m) => m.values[0]), ['::/0']);
  });

  it('looks an IPv4-mapped IPv6 client up as the IPv4 it carries', () => {
    const table = new PrefixTable<string>();
    table.add(parseNetwork('198.51.100.0/24')!, 'v4');
    assert.deepEqual([...table.matches(parseIp('::ffff:198.51.100.7')!)].map((m) => m.values[0]), ['v4']);
    assert.deepEqual([...table.matches(parseIp('::ffff:c633:6407')!)].map((m) => m.values[0]), ['v4']);
  });
});

describe('ListSet', () => {
  it('denies and allows by network; no entry means the limits decide', () => {
    const entries = [cidr('deny', '203.0.113.0/24'), cidr('allow', '198.51.100.7')];
    assert.equal(verdict(entries, '203.0.113.99'), 'deny');
    assert.equal(verdict(entries, '198.51.100.7'), 'allow');
    assert.equal(verdict(entries, '198.51.100.8'), undefined);
    assert.equal(verdict(entries, '2001:db8::1'), undefined);
  });

  it('the most specific entry wins: an allowed /32 inside a denied /24, a denied /128 inside an allowed /32', () => {
    assert.equal(verdict([cidr('deny', '203.0.113.0/24'), cidr('allow', '203.0.113.5/32')], '203.0.113.5'), 'allow');
    assert.equal(verdict([cidr('deny', '203.0.113.0/24'), cidr('allow', '203.0.113.5/32')], '203.0.113.6'), 'deny');
    assert.equal(verdict([cidr('allow', '2001:db8::/32'), cidr('deny', '2001:db8::bad/128')], '2001:db8::bad'), 'deny');
    assert.equal(verdict([cidr('allow', '0.0.0.0/0'), cidr('deny', '10.0.0.0/8')], '10.0.0.1'), 'deny');
  });

  it('deny wins a tie', () => {
    assert.equal(verdict([cidr('allow', '10.0.0.0/8'), cidr('deny', '10.0.0.0/8')], '10.2.3.4'), 'deny');
    assert.equal(verdict([cidr('deny', '10.0.0.0/8'), cidr('allow', '10.0.0.0/8')], '10.2.3.4'), 'deny');
  });

  it('an identity entry (tenant, header, claim) beats any network', () => {
    const tenantAllow: ListEntry = { id: 't', action: 'allow', match: { kind: 'tenant', tenant: 'acme' } };
    assert.equal(verdict([cidr('deny', '10.1.2.3/32'), tenantAllow], '10.1.2.3', { tenant: 'acme' }), 'allow');
    assert.equal(verdict([cidr('deny', '10.1.2.3/32'), tenantAllow], '10.1.2.3', { tenant: 'other' }), 'deny');
  });

  it('an expired entry no longer applies', () => {
    const entries = [cidr('deny', '10.0.0.0/8', { expiresAt: 2_000 })];
    assert.equal(verdict(entries, '10.0.0.1', { now: 1_999 }), 'deny');
    assert.equal(verdict(entries, '10.0.0.1', { now: 2_000 }), undefined);
  });

  it('a route-scoped entry applies on its routes only', () => {
    const entries = [cidr('deny', '10.0.0.0/8', { routes: ['login'] })];
    assert.equal(verdict(entries, '10.0.0.1', { route: 'login' }), 'deny');
    assert.equal(verdict(entries, '10.0.0.1', { route: 'orders' }), undefined);
  });

  it('a limit-scoped allow lifts that limit only, and does not outweigh a deny', () => {
    const lift = cidr('allow', '10.0.0.0/8', { limit: 'per-ip' });
    const found = new ListSet([lift]).check(query('10.0.0.1'));
    assert.equal(found.action, undefined);
    assert.deepEqual([...found.exemptLimits], ['per-ip']);
    assert.equal(new ListSet([lift]).check(query('11.0.0.1')).exemptLimits.size, 0);
    assert.equal(verdict([lift, cidr('deny', '10.0.0.0/16')], '10.0.0.1'), 'deny');
  });

  it('matches header and claim values by their hash, the tenant by name', () => {
    const entries: ListEntry[] = [
      { id: 'h', action: 'deny', match: { kind: 'header', header: 'User-Agent', valueHash: listValueHash('badbot/1.0') } },
      { id: 'c', action: 'allow', match: { kind: 'claim', claim: 'sub', valueHash: listValueHash('partner-7') } },
      { id: 't', action: 'deny', match: { kind: 'tenant', tenant: 'mallory' } },
    ];
    assert.equal(verdict(entries, '10.0.0.1', { headers: { 'user-agent': 'badbot/1.0' } }), 'deny');
    assert.equal(verdict(entries, '10.0.0.1', { headers: { 'user-agent': 'curl/8' } }), undefined);
    assert.equal(verdict(entries, '10.0.0.1', { claims: { sub: 'partner-7' } }), 'allow');
    assert.equal(verdict(entries, '10.0.0.1', { claims: { sub: 'partner-8' } }), undefined);
    assert.equal(verdict(entries, '10.0.0.1', { tenant: 'mallory' }), 'deny');
    assert.ok(!JSON.stringify(entries).includes('partner-7'), 'the value is kept hashed');
  });

  it('does not read the client address when no network entry exists', () => {
    let asked = 0;
    new ListSet([{ id: 't', action: 'deny', match: { kind: 'tenant', tenant: 'x' } }]).check({ route: 'r', headers: {}, now: 0, ip: () => {
        asked++;
        return undefined;
      },
    });
    assert.equal(asked, 0);
  });

  it('refuses an entry whose CIDR does not parse', () => {
    assert.throws(() => new ListSet([cidr('deny', '10.0.0.0/40')]), /not a CIDR/);
  });
});

describe('CombinedLists', () => {
  it('reads the config file\'s and the store\'s sets as one: the most specific entry of either wins, deny at a tie', () => {
    const fromConfig = new ListSet([cidr('deny', '203.0.113.0/24'), cidr('allow', '198.51.100.0/24')]);
    let stored = new ListSet([cidr('allow', '203.0.113.5'), cidr('deny', '198.51.100.0/24')]);
    const both = new CombinedLists([() => fromConfig, () => stored]);
    assert.equal(both.check(query('203.0.113.5')).action, 'allow', "the store's /32 inside the config's denied /24");
    assert.equal(both.check(query('203.0.113.6')).action, 'deny');
    assert.equal(both.check(query('198.51.100.1')).action, 'deny', 'an allow and a deny of the same network, one in each: denied');
    assert.equal(both.check(query('192.0.2.1')).action, undefined);
    stored = ListSet.EMPTY;
    assert.equal(both.check(query('198.51.100.1')).action, 'allow', 'a new stored set is read at the next request');
    stored = new ListSet([cidr('allow', '192.0.2.0/24', { limit: 'per-ip' })]);
    assert.deepEqual([...both.check(query('192.0.2.1')).exemptLimits], ['per-ip']);
  });
});
