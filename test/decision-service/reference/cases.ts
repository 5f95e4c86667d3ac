// The lookups of envoyproxy/ratelimit's config tests (basic_config.yaml and
// wildcard.yaml's situations, in configs of our own): which limit a
// descriptor lands on. Asked of the loader (reference-config.test.ts) and over
// gRPC (reference-answers.int.test.ts).

export type Pairs = [string, string][];

export interface ExpectedLimit {
  rpu: number;
  unit: string;
  name?: string;
  unlimited?: boolean;
}

export const BASIC = `
domain: basic
descriptors:
  - key: tier
    value: gold
    descriptors:
      - key: user
        rate_limit: { unit: second, requests_per_unit: 5 }
      - key: user
        value: ann
        rate_limit: { unit: second, requests_per_unit: 10 }
  - key: region
    rate_limit: { unit: minute, requests_per_unit: 20 }
  - key: region
    value: eu
    rate_limit: { unit: minute, requests_per_unit: 30 }
  - key: region
    value: free
  - key: team
    rate_limit: { unit: hour, requests_per_unit: 1 }
  - key: org
    rate_limit: { name: org_limit, unit: day, requests_per_unit: 1 }
  - key: app
    value: shop
    rate_limit: { unit: day, requests_per_unit: 15 }
    descriptors:
      - key: page
        value: cart
        rate_limit: { unit: day, requests_per_unit: 25 }
  - key: batch
    rate_limit: { unlimited: true }
  - key: client
    detailed_metric: true
    rate_limit: { unit: minute, requests_per_unit: 70 }
`;

export const BASIC_CASES: [string, Pairs, ExpectedLimit | undefined][] = [
  ['no entries: no limit', [], undefined],
  ['a key-value node without a limit of its own', [['tier', 'gold']], undefined],
  ['a value the config does not name', [['tier', 'silver']], undefined],
  ['more entries than the config is deep', [['region', 'eu'], ['sub', 'x']], undefined],
  ['the last entry matches nothing below', [['app', 'shop'], ['page', 'home']], undefined],
  ['nested key only', [['tier', 'gold'], ['user', 'bob']], { rpu: 5, unit: 'second' }],
  ['nested key and value beat the key', [['tier', 'gold'], ['user', 'ann']], { rpu: 10, unit: 'second' }],
  ['top key only', [['region', 'us']], { rpu: 20, unit: 'minute' }],
  ['top key and value', [['region', 'eu']], { rpu: 30, unit: 'minute' }],
  ['a value with no limit whitelists it', [['region', 'free']], undefined],
  ['no name', [['team', 'x']], { rpu: 1, unit: 'hour' }],
  ['a name', [['org', 'x']], { rpu: 1, unit: 'day', name: 'org_limit' }],
  ['a node with a limit and children, one entry', [['app', 'shop']], { rpu: 15, unit: 'day' }],
  ['its child', [['app', 'shop'], ['page', 'cart']], { rpu: 25, unit: 'day' }],
  ['unlimited', [['batch', 'x']], { rpu: 0, unit: 'second', unlimited: true }],
  ['detailed_metric changes no decision', [['client', 'any']], { rpu: 70, unit: 'minute' }],
  ['an empty value matches the key-only node', [['region', '']], { rpu: 20, unit: 'minute' }],
];

export const WILDCARD = `
domain: wild
descriptors:
  - { key: wild, value: 'foo*', rate_limit: { unit: minute, requests_per_unit: 20 } }
  - { key: noWild, value: foo, rate_limit: { unit: minute, requests_per_unit: 21 } }
  - { key: noVal, rate_limit: { unit: minute, requests_per_unit: 22 } }
  - { key: midWild, value: 'bar*b', rate_limit: { unit: minute, requests_per_unit: 23 } }
  - { key: multiWild, value: 'foo*bar*baz', rate_limit: { unit: minute, requests_per_unit: 10 } }
  - key: nestedWild
    value: val1
    descriptors:
      - { key: wild, value: 'goo*', rate_limit: { unit: minute, requests_per_unit: 24 } }
  - { key: path, value: '/api/*/action', rate_limit: { unit: minute, requests_per_unit: 25 } }
  - { key: route, value: '/api/*/resource/*/action', rate_limit: { unit: minute, requests_per_unit: 26 } }
  - { key: file, value: test1, rate_limit: { unit: minute, requests_per_unit: 50 } }
  - { key: file, value: 'test*', share_threshold: true, rate_limit: { unit: minute, requests_per_unit: 100 } }
  - { key: any, value: '*', rate_limit: { unit: minute, requests_per_unit: 27 } }
  - { key: a_b, rate_limit: { unit: minute, requests_per_unit: 28 } }
`;

export const WILDCARD_CASES: [Pairs, number | undefined][] = [
  [[['wild', 'foo1']], 20],
  [[['wild', 'foo']], 20],
  [[['wild', 'bar']], undefined],
  [[['noWild', 'foo1']], undefined],
  [[['noVal', 'anything']], 22],
  [[['midWild', 'barab']], 23],
  [[['midWild', 'bar123b']], 23],
  [[['midWild', 'barb']], 23],
  [[['midWild', 'bara']], undefined],
  [[['midWild', 'xbarb']], undefined],
  [[['midWild', 'bab']], undefined],
  [[['multiWild', 'foo123bar456baz']], 10],
  [[['multiWild', 'foobarbaz']], 10],
  [[['multiWild', 'foo123baz']], undefined],
  [[['multiWild', 'bar456baz']], undefined],
  [[['nestedWild', 'val1'], ['wild', 'goo2']], 24],
  [[['path', '/api/123/action']], 25],
  [[['path', '/api/123/other']], undefined],
  [[['route', '/api/v1/resource/123/action']], 26],
  [[['route', '/api/v1/resource/action']], undefined],
  [[['file', 'test1']], 50],
  [[['file', 'test23']], 100],
  [[['any', '']], 27],
  [[['wild', '']], undefined],
  [[['a', 'b']], undefined],
  [[['a_b', 'c']], 28],
];
