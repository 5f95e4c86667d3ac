// The cases of envoyproxy/ratelimit's config tests (test/config/config_test.go
// and its YAML situations), table-driven on Sluice's loader, in configs of our
// own: what loads, which limit a descriptor lands on, and every refusal named
// with the reference's words.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findLimit, matchDescriptor } from '../../src/decision-service/descriptor-tree.js';
import { loadEnvoyConfig, loadEnvoyFiles, parseEnvoyConfig } from '../../src/decision-service/envoy-config.js';
import { BASIC, BASIC_CASES, type Pairs, WILDCARD, WILDCARD_CASES } from './reference/cases.js';

const levelOf = (text: string) => parseEnvoyConfig(text, 'rl.yaml').level;
const entries = (pairs: Pairs) => pairs.map(([key, value]) => ({ key, value }));

const errorOf = (text: string): string => {
  try {
    parseEnvoyConfig(text, 'rl.yaml');
  } catch (error) {
    return (error as Error).message;
  }
  return 'no error';
};


describe('reference config cases: what a descriptor lands on', () => {
  const basic = levelOf(BASIC);
  for (const [name, pairs, want] of BASIC_CASES) {
    it(name, () => {
      const limit = findLimit(basic, entries(pairs));
      if (want === undefined) return assert.equal(limit, undefined);
      assert.ok(limit, 'a limit');
      assert.deepEqual({ rpu: limit.requestsPerUnit, unit: limit.unit, name: limit.name, unlimited: limit.unlimited }, { name: undefined, unlimited: false, ...want });
    });
  }
});


describe('reference config cases: wildcards anywhere in a value', () => {
  const wild = levelOf(WILDCARD);
  for (const [pairs, want] of WILDCARD_CASES) {
    it(`${pairs.map(([k, v]) => `${k}=${v}`).join(',')} → ${want ?? 'no limit'}`, () => {
      assert.equal(findLimit(wild, entries(pairs))?.requestsPerUnit, want);
    });
  }

  it('share_threshold: every value the wildcard matches shares its bucket; an exact value keeps its own', () => {
    assert.deepEqual(matchDescriptor(wild, entries([['file', 'test2']]))?.sharedValues, ['test*']);
    assert.deepEqual(matchDescriptor(wild, entries([['file', 'test1']]))?.sharedValues, [undefined]);
    assert.deepEqual(matchDescriptor(wild, entries([['wild', 'foo9']]))?.sharedValues, [undefined], 'no share_threshold: each value its own bucket');
  });
});

describe('reference config cases: fields that load', () => {
  it('every field the reference reads loads; the ones that change no decision are accepted', () => {
    const level = levelOf(`
domain: fields
descriptors:
  - key: a
    value: 'x*'
    share_threshold: true
    value_to_metric: true
    detailed_metric: true
    quota_mode: true
    shadow_mode: true
    metadata: { service_with_quota: { name: s1 }, tags: [1, two] }
    rate_limit:
      name: a-limit
      unit: WEEK
      requests_per_unit: 3
      replaces: [{ name: other }]
  - key: b
    rate_limit: { unit: second, requests_per_unit: 0 }
  - key: c
    descriptors:
  - key: d
    rate_limit: { unlimited: true, requests_per_unit: 25 }
`);
    const a = findLimit(level, entries([['a', 'xyz']]))!;
    assert.deepEqual([a.unit, a.requestsPerUnit, a.shadow, a.quotaMode, a.replaces], ['week', 3, true, true, ['other']]);
    assert.deepEqual(a.rules, [{ policy: 'fixed_window', limit: 3, windowMs: 7 * 86_400_000, shadow: true }]);
    const b = findLimit(level, entries([['b', 'q']]))!;
    assert.deepEqual([b.blocked, b.requestsPerUnit, b.rules], [true, 0, []], 'requests_per_unit 0: refuses everything');
    assert.equal(findLimit(level, entries([['c', 'q']])), undefined, 'empty descriptors: nothing below');
    assert.equal(findLimit(level, entries([['d', 'q']]))!.unlimited, true, 'unlimited with requests_per_unit loads (only a unit is refused)');
    assert.equal(errorOf('domain: empty\ndescriptors:\n'), 'no error', 'an empty descriptors: list');
  });

  it('text fields read as written, as the reference\'s Go strings get them: value 1.0 is "1.0"', () => {
    const level = levelOf('domain: 5\ndescriptors:\n  - key: version\n    value: 1.0\n    rate_limit: { unit: second, requests_per_unit: 7 }\n  - key: flag\n    value: true\n    rate_limit: { unit: second, requests_per_unit: 8 }\n');
    assert.equal(findLimit(level, entries([['version', '1.0']]))?.requestsPerUnit, 7);
    assert.equal(findLimit(level, entries([['version', '1']])), undefined);
    assert.equal(findLimit(level, entries([['flag', 'true']]))?.requestsPerUnit, 8);
    assert.equal(parseEnvoyConfig('domain: 5\n', 'rl.yaml').domain, '5');
  });

  it('requests_per_unit unset is the reference\'s 0', () => {
    assert.equal(findLimit(levelOf('domain: d\ndescriptors:\n  - key: a\n    rate_limit: { unit: second }\n'), entries([['a', 'b']]))!.blocked, true);
  });
});

describe('reference config cases: refusals, in the reference\'s words', () => {
  const cases: [string, string, RegExp][] = [
    ['empty domain', 'descriptors:\n', /^rl\.yaml:1: domain: config file cannot have empty domain$/],
    ['empty key', 'domain: d\ndescriptors:\n  - value: value1\n', /^rl\.yaml:3: descriptors\[0\]\.key: descriptor has empty key$/],
    ['duplicate key', 'domain: d\ndescriptors:\n  - key: key1\n    value: value1\n\n  - key: key1\n    value: value1\n', /^rl\.yaml:6: descriptors\[1\]\.key: duplicate descriptor composite key 'd\.key1_value1'$/],
    ['duplicate nested key', 'domain: d\ndescriptors:\n  - key: a\n    descriptors:\n      - key: b\n      - key: b\n', /descriptors\[0\]\.descriptors\[1\]\.key: duplicate descriptor composite key 'd\.a\.b'$/],
    ['bad unit', 'domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: foo\n      requests_per_unit: 5\n', /^rl\.yaml:5: descriptors\[0\]\.rate_limit\.unit: invalid rate limit unit 'foo'/],
    ['no unit', 'domain: d\ndescriptors:\n  - key: a\n    rate_limit: { requests_per_unit: 5 }\n', /descriptors\[0\]\.rate_limit\.unit: invalid rate limit unit ''/],
    ['replaces naming itself', 'domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      name: self\n      replaces:\n        - name: self\n      unit: second\n      requests_per_unit: 5\n', /descriptors\[0\]\.rate_limit\.replaces\[0\]\.name: replaces should not contain name of same descriptor$/],
    ['replaces empty', 'domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      name: self\n      replaces:\n        - name:\n      unit: second\n      requests_per_unit: 5\n', /descriptors\[0\]\.rate_limit\.replaces\[0\]\.name: should not have an empty replaces entry$/],
    ['bad YAML', "'''\n", /^rl\.yaml:2: Missing closing 'quote/],
    ['misspelled key', 'domain: d\ndescriptors:\n  - key: a\n    value: b\n    ratelimit:\n      unit: day\n', /^rl\.yaml:6: descriptors\[0\]\.ratelimit: config error, unknown key 'ratelimit'$/],
    ['misspelled key inside rate_limit', 'domain: d\ndescriptors:\n  - key: a\n    rate_limit:\n      unit: day\n      requestsperunit: 5\n', /^rl\.yaml:6: descriptors\[0\]\.rate_limit\.requestsperunit: config error, unknown key 'requestsperunit'$/],
    ['non-string key', '0.25: test-domain\ndescriptors: []\n', /^rl\.yaml:1: config error, key is not of type string: 0\.25$/],
    ['non-map list', 'domain: d\ndescriptors:\n  - a\n  - b\n', /^rl\.yaml:3: descriptors\[0\]: config error, list of type other than map: a$/],
    ['unlimited with a unit', 'domain: d\ndescriptors:\n  - key: foo\n    rate_limit:\n      unlimited: true\n      unit: day\n      requests_per_unit: 25\n', /descriptors\[0\]\.rate_limit\.unlimited: should not specify rate limit unit when unlimited$/],
    ['a limit above Sluice\'s largest', 'domain: d\ndescriptors:\n  - key: a\n    rate_limit: { unit: second, requests_per_unit: 5000000000 }\n', /descriptors\[0\]\.rate_limit\.requests_per_unit: must be at most 1000000000/],
    ['sluice: on a limit of 0', 'domain: d\ndescriptors:\n  - key: a\n    rate_limit: { unit: second, requests_per_unit: 0 }\n    sluice: { onStoreDown: open }\n', /descriptors\[0\]\.sluice: requests_per_unit 0 refuses every request/],
    ['sluice: on an unlimited limit', 'domain: d\ndescriptors:\n  - key: a\n    rate_limit: { unlimited: true }\n    sluice: { onStoreDown: open }\n', /descriptors\[0\]\.sluice: an unlimited rate_limit takes no sluice: rules/],
    ['share_threshold without a wildcard', 'domain: d\ndescriptors:\n  - key: a\n    value: b\n    share_threshold: true\n', /descriptors\[0\]\.share_threshold: share_threshold can only be used with wildcard values/],
  ];
  for (const [name, text, want] of cases) {
    it(name, () => assert.match(errorOf(text), want));
  }

  const dir = mkdtempSync(join(tmpdir(), 'sluice-reference-config-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  it('duplicate domain across files', () => {
    writeFileSync(join(dir, 'a.yaml'), BASIC);
    writeFileSync(join(dir, 'b.yaml'), 'domain: basic\ndescriptors:\n');
    assert.throws(() => loadEnvoyConfig([dir]), /b\.yaml:1: domain: duplicate domain 'basic' in config file/);
  });
});

describe('reference keys where the reference never reads them: loaded, ignored, one warning per file', () => {
  const text = 'domain: d\ndescriptors:\n  - key: a\n    replaces: [{ name: b }]\n    rate_limit: { unit: day, requests_per_unit: 1, shadow_mode: true }\n  - key: b\n    rate_limit: { name: b, unit: hour, requests_per_unit: 2 }\n';
  it('replaces on a descriptor and shadow_mode inside rate_limit change nothing, as in the reference', () => {
    const { level, warning } = parseEnvoyConfig(text, 'rl.yaml');
    const a = findLimit(level, entries([['a', 'x']]))!;
    assert.deepEqual([a.unit, a.requestsPerUnit, a.shadow, a.replaces], ['day', 1, false, []]);
    assert.equal(findLimit(level, entries([['b', 'x']]))?.requestsPerUnit, 2);
    assert.equal(warning, 'rl.yaml: ignored, as envoyproxy/ratelimit ignores them: descriptors[0].replaces (line 4) is read only in rate_limit; descriptors[0].rate_limit.shadow_mode (line 5) is read only in a descriptor');
  });
  it('a file without them has no warning; loadEnvoyFiles gives one line per file', () => {
    assert.equal(parseEnvoyConfig(BASIC, 'rl.yaml').warning, undefined);
    const dir = mkdtempSync(join(tmpdir(), 'sluice-misplaced-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'a.yaml'), text);
    writeFileSync(join(dir, 'b.yaml'), BASIC);
    writeFileSync(join(dir, 'c.yaml'), 'domain: c\nunit: second\n');
    const { warnings } = loadEnvoyFiles([dir]);
    assert.equal(warnings.length, 2);
    assert.match(warnings[1]!, /c\.yaml: ignored, as envoyproxy\/ratelimit ignores them: unit \(line 2\) is read only in rate_limit$/);
  });
});

describe('MERGE_DOMAIN_CONFIG (the reference\'s TestDomainMerge and TestDuplicateKeyDomainMerge)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-merge-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const key1 = 'domain: test-domain\ndescriptors:\n  - key: key1\n    value: value1\n    rate_limit: { unit: minute, requests_per_unit: 10 }\n';
  const key2 = 'domain: test-domain\ndescriptors:\n  - key: key2\n    value: value2\n    rate_limit: { unit: minute, requests_per_unit: 20 }\n';
  it('two files of one domain: both descriptors, when merging; refused without', () => {
    writeFileSync(join(dir, 'merge_domain_key1.yaml'), key1);
    writeFileSync(join(dir, 'merge_domain_key2.yaml'), key2);
    const level = loadEnvoyFiles([dir], { mergeDomains: true }).domains.get('test-domain')!;
    assert.equal(findLimit(level, entries([['key1', 'value1']]))?.requestsPerUnit, 10);
    assert.equal(findLimit(level, entries([['key2', 'value2']]))?.requestsPerUnit, 20);
    assert.throws(() => loadEnvoyFiles([dir]), /merge_domain_key2\.yaml:1: domain: duplicate domain 'test-domain' in config file/);
  });
  it('one key in both files is still a duplicate', () => {
    const paths = [join(dir, 'merge_domain_key1.yaml'), join(dir, 'merge_domain_key1.yaml')];
    assert.throws(() => loadEnvoyFiles(paths, { mergeDomains: true }), /merge_domain_key1\.yaml:3: descriptors\[0\]\.key: duplicate descriptor composite key 'test-domain\.key1_value1'$/);
  });
});
