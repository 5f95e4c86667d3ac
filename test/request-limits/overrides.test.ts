// Per-key overrides on the request path: selectors in canonical form, and the
// precedence RouteLimits applies (docs/limits.md#overrides) — exact IP over the
// longest CIDR over the inline rule; a tenant's override over the store's
// tenant × route rule; IPv6 CIDRs matched on the real address.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RouteConfig } from '../../src/config/types.js';
import type { Rule } from '../../src/policies/rule.js';
import { ClientIpResolver } from '../../src/request-limits/client-ip.js';
import { headerBucketId, RouteLimits } from '../../src/request-limits/request-limits.js';
import type { KeySource, RequestLimit } from '../../src/request-limits/types.js';
import { buildOverrideSet } from '../../src/rules/override-set.js';
import { parseSelector } from '../../src/rules/override-selector.js';
import { defaultResolved } from '../../src/rules/rule-set.js';
import type { RuleResolver, StoredOverride } from '../../src/rules/types.js';

const fw = (limit: number): Rule => ({ policy: 'fixed_window', limit, windowMs: 60_000 });
const STORE_RULE = fw(7);
const INLINE = fw(1);

function limitsFor(key: KeySource, overrides: [string, number][], options: { inline?: boolean; cost?: number } = {}): RouteLimits {
  const stored: StoredOverride[] = overrides.map(([selector, limit]) => ({ limitId: 'the-limit', selector: parseSelector(selector).text, rule: fw(limit), updatedAt: '' }));
  const set = buildOverrideSet(stored);
  const rules: RuleResolver = { resolve: () => defaultResolved(STORE_RULE), overrides: () => set };
  const route = { id: 'r', cost: options.cost ?? 1, limits: [{ id: 'the-limit', key, rule: options.inline === false ? undefined : INLINE }] } as unknown as RouteConfig;
  return new RouteLimits(route, rules, new ClientIpResolver({ trustedProxies: [], header: 'x-forwarded-for' }), 64);
}

function limitOf(limits: RouteLimits, ip: string, tenant?: string, headers: Record<string, string> = {}): number {
  const resolved = limits.resolve(tenant, { headers, socket: { remoteAddress: ip } });
  assert.ok(Array.isArray(resolved), String(resolved));
  const [only] = resolved as RequestLimit[];
  return (only!.rule as { limit: number }).limit;
}

describe('override selectors', () => {
  it('are kept in one canonical form', () => {
    const cases: [string, string][] = [
      ['ip:203.0.113.7', 'ip:203.0.113.7'],
      ['ip:203.0.113.7/32', 'ip:203.0.113.7'],
      ['ip:10.0.0.0/8', 'ip:10.0.0.0/8'],
      ['ip:0.0.0.0/0', 'ip:0.0.0.0/0'],
      ['ip:::ffff:192.0.2.1', 'ip:192.0.2.1'],
      ['ip:2001:DB8:0000::1', 'ip:2001:db8::1'],
      ['ip:2001:db8:0:0:0:0:0:1/128', 'ip:2001:db8::1'],
      ['ip:2001:db8:abcd:12::/64', 'ip:2001:db8:abcd:12::/64'],
      ['ip:2001:db8:8000::/33', 'ip:2001:db8:8000::/33'],
      ['tenant:shop-a', 'tenant:shop-a'],
      ['header:alice', `header:${headerBucketId('alice')}`],
      [`header:${headerBucketId('alice')}`, `header:${headerBucketId('alice')}`],
    ];
    for (const [input, canonical] of cases) assert.equal(parseSelector(input).text, canonical, input);
  });

  it('are refused with a message naming the field', () => {
    for (const [input, message] of [
      ['ip:10.1.2.3/8', /did you mean 10\.0\.0\.0\/8/],
      ['ip:2001:db8::1/32', /did you mean 2001:db8::\/32/],
      ['ip:10.0.0.0/33', /0 to 32/],
      ['ip:1.2.3', /not an IPv4 or IPv6 address/],
      ['ip:10.0.0.0/-1', /0 to 32/],
      ['cidr:10.0.0.0/8', /must start with tenant:, ip: or header:/],
      ['header:', /needs the header value/],
    ] as const) {
      assert.throws(() => parseSelector(input, 'selector'), (error: Error & { field?: string }) => error.field === 'selector' && message.test(error.message), input);
    }
  });
});

describe('override precedence on the request path', () => {
  it('an exact IP beats the longest CIDR, which beats a shorter one, which beats the inline rule', () => {
    const limits = limitsFor({ kind: 'ip' }, [
      ['ip:10.0.0.0/8', 100],
      ['ip:10.1.0.0/16', 200],
      ['ip:10.1.2.3', 300],
    ]);
    assert.equal(limitOf(limits, '10.1.2.3'), 300);
    assert.equal(limitOf(limits, '10.1.2.4'), 200);
    assert.equal(limitOf(limits, '10.2.0.1'), 100);
    assert.equal(limitOf(limits, '::ffff:10.1.2.3'), 300, 'an IPv4-mapped socket address is its IPv4');
    assert.equal(limitOf(limits, '192.0.2.1'), 1, 'no override: the inline rule');
  });

  it('IPv6 CIDRs match the real address, not its /64 bucket', () => {
    const limits = limitsFor({ kind: 'ip' }, [
      ['ip:2001:db8::/32', 100],
      ['ip:2001:db8:0:1::/64', 200],
      ['ip:2001:db8:0:1::42', 300],
      ['ip:2001:db8:8000::/33', 400],
    ]);
    assert.equal(limitOf(limits, '2001:db8:0:1::42'), 300);
    assert.equal(limitOf(limits, '2001:db8:0:1::43'), 200, 'same /64 bucket as ::42, another override');
    assert.equal(limitOf(limits, '2001:db8:0:2::1'), 100);
    assert.equal(limitOf(limits, '2001:db8:ffff::1'), 400, 'a /33 that does not end on a nibble');
    assert.equal(limitOf(limits, '2001:db9::1'), 1);
    assert.equal(limitOf(limits, '10.0.0.1'), 1, 'IPv6 overrides never match an IPv4 client');
  });

  it("a tenant's override beats its tenant × route rule; other tenants keep the store's", () => {
    const limits = limitsFor({ kind: 'tenant' }, [['tenant:shop-a', 50]], { inline: false });
    assert.equal(limitOf(limits, '10.0.0.1', 'shop-a'), 50);
    assert.equal(limitOf(limits, '10.0.0.1', 'shop-b'), 7);
  });

  it('on a tenant + IP limit the IP override comes first, then the tenant one', () => {
    const limits = limitsFor({ kind: 'tenant+ip' }, [
      ['tenant:shop-a', 50],
      ['ip:192.0.2.0/24', 60],
    ]);
    assert.equal(limitOf(limits, '192.0.2.9', 'shop-a'), 60);
    assert.equal(limitOf(limits, '198.51.100.1', 'shop-a'), 50);
    assert.equal(limitOf(limits, '198.51.100.1', 'shop-b'), 1);
  });

  it("a header-keyed limit matches the value's hash; a selector of the wrong kind is never consulted", () => {
    const header = limitsFor({ kind: 'header', header: 'x-user-id' }, [
      ['header:alice', 40],
      ['ip:0.0.0.0/0', 99],
    ]);
    assert.equal(limitOf(header, '10.0.0.1', undefined, { 'x-user-id': 'alice' }), 40);
    assert.equal(limitOf(header, '10.0.0.1', undefined, { 'x-user-id': 'bob' }), 1);
    const tenantKeyed = limitsFor({ kind: 'tenant' }, [['ip:0.0.0.0/0', 99]]);
    assert.equal(limitOf(tenantKeyed, '10.0.0.1', 'shop-a'), 1);
  });

  it("an override smaller than the route's cost refuses the request as cost_exceeds_capacity", () => {
    const limits = limitsFor({ kind: 'ip' }, [['ip:10.0.0.1', 2]], { cost: 5, inline: true });
    assert.equal(limits.resolve(undefined, { headers: {}, socket: { remoteAddress: '10.0.0.1' } }), 'cost_exceeds_capacity');
  });
});
