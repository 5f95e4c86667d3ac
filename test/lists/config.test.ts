// The config file's `lists:`: what it reads, and each refusal naming its field and line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { listValueHash } from '../../src/lists/list-set.js';

const ROUTES = `routes:
  - id: orders
    path: /orders
    upstream: http://127.0.0.1:8090
    limits:
      - { id: per-ip, key: ip, rule: { policy: fixed_window, limit: 5, windowMs: 1000 } }
      - { id: open, kind: concurrency, key: tenant, max: 2 }
  - { id: login, path: /login, upstream: http://127.0.0.1:8090 }
`;
const parse = (yaml: string) => parseConfig(ROUTES + yaml, { source: 'lists.yaml', env: {} });
const refused = (yaml: string, line: number, field: string, message: RegExp) =>
  assert.throws(
    () => parse(yaml),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.equal(error.line, line, error.message);
      assert.equal(error.field, field, error.message);
      assert.match(error.message, message);
      return true;
    },
  );

describe('config lists:', () => {
  it('reads every kind of entry, hashing header values, with scope, limit, expiry and note', () => {
    const { lists } = parse(`lists:
  - { action: deny, cidr: 203.0.113.0/24, note: scanner, expiresAt: '2027-01-31T00:00:00Z' }
  - { action: allow, tenant: partner, routes: [orders] }
  - { action: allow, cidr: '10.0.0.0/8', limit: per-ip }
  - { action: deny, header: { name: User-Agent, value: badbot/1.0 } }
`);
    assert.deepEqual(lists[0], { id: 'config-0', action: 'deny', match: { kind: 'cidr', cidr: '203.0.113.0/24' }, expiresAt: Date.parse('2027-01-31T00:00:00Z'), note: 'scanner' });
    assert.deepEqual(lists[1]?.routes, ['orders']);
    assert.equal(lists[2]?.limit, 'per-ip');
    assert.deepEqual(lists[3]?.match, { kind: 'header', header: 'user-agent', valueHash: listValueHash('badbot/1.0') });
    assert.ok(!JSON.stringify(lists).includes('badbot'), 'the header value is kept hashed');
    assert.deepEqual(parse('').lists, []);
  });

  it('refuses a CIDR that does not parse, naming the field and line', () => {
    refused('lists:\n  - action: deny\n    cidr: 203.0.113.0/33\n', 11, 'lists[0].cidr', /IPv4 or IPv6 address or CIDR/);
    refused('lists:\n  - { action: deny, cidr: not-an-address }\n', 10, 'lists[0].cidr', /CIDR/);
  });

  it('refuses an unknown route, naming the route', () => {
    refused('lists:\n  - action: deny\n    tenant: mallory\n    routes: [orders, nowhere]\n', 12, 'lists[0].routes[1]', /unknown route nowhere/);
  });

  it('refuses allow and deny in one entry, or two matches in one entry, or none', () => {
    refused('lists:\n  - { action: [allow, deny], tenant: x }\n', 10, 'lists[0].action', /allow or deny/);
    refused('lists:\n  - { action: deny, tenant: x, cidr: 10.0.0.0/8 }\n', 10, 'lists[0].tenant', /exactly one of cidr, tenant, header, claim/);
    refused('lists:\n  - { action: deny, note: nothing to match }\n', 10, 'lists[0].cidr', /exactly one of/);
  });

  it('refuses a limit on a deny entry, an unknown limit and a concurrency limit', () => {
    refused('lists:\n  - { action: deny, tenant: x, limit: per-ip }\n', 10, 'lists[0].limit', /only an allow entry/);
    refused('lists:\n  - { action: allow, tenant: x, limit: per-route, routes: [orders] }\n', 10, 'lists[0].limit', /unknown limit per-route/);
    refused('lists:\n  - { action: allow, tenant: x, limit: per-ip, routes: [login] }\n', 10, 'lists[0].limit', /unknown limit per-ip/);
    refused('lists:\n  - { action: allow, tenant: x, limit: open }\n', 10, 'lists[0].limit', /concurrency limit/);
  });

  it('refuses a claim entry where no route verifies tokens, a bad expiry, an unknown field', () => {
    refused('lists:\n  - { action: deny, claim: { name: sub, value: u1 } }\n', 10, 'lists[0].claim', /verifies a JWT/);
    refused("lists:\n  - { action: deny, tenant: x, expiresAt: 'next week' }\n", 10, 'lists[0].expiresAt', /ISO 8601/);
    refused('lists:\n  - { action: deny, tenant: x, addr: 1.2.3.4 }\n', 10, 'lists[0].addr', /unknown field/);
  });
});
