// envoyproxy/ratelimit config files: read as they are, mapped onto Sluice
// rules, and every mistake reported with file, line and field. Also the
// decisionService section of sluice.yaml.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { findLimit } from '../../src/decision-service/descriptor-tree.js';
import { loadEnvoyConfig, parseEnvoyConfig } from '../../src/decision-service/envoy-config.js';
import { EXAMPLES } from '../helpers/decision-service-support.js';
import { sluiceCli } from '../helpers/cli.js';

const errorOf = (text: string): string => {
  try {
    parseEnvoyConfig(text, 'rl.yaml');
  } catch (error) {
    return (error as Error).message;
  }
  return 'no error';
};

describe('envoyproxy/ratelimit config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-envoy-config-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('the example file: the fixed window by default, the sluice: extension, unlimited, shadow_mode', () => {
    const shop = loadEnvoyConfig([join(EXAMPLES, 'ratelimit-config.yaml')]).get('shop')!;
    const perKey = findLimit(shop, [{ key: 'api_key', value: 'anything' }])!;
    assert.deepEqual(perKey.rules, [{ policy: 'token_bucket', capacity: 2, refillPerSecond: 0.05 }]);
    const global = findLimit(shop, [{ key: 'generic_key', value: 'global' }])!;
    assert.deepEqual(global.rules, [{ policy: 'fixed_window', limit: 1000, windowMs: 1000 }]);
    assert.deepEqual(global.replaces, ['orders-path']);
    assert.equal(findLimit(shop, [{ key: 'internal', value: 'x' }])!.unlimited, true);
    assert.equal(findLimit(shop, [{ key: 'generic_key', value: 'trial' }])!.rules[0]!.shadow, true);
    assert.equal(findLimit(shop, [{ key: 'generic_key', value: 'unknown' }]), undefined);
  });

  it('matching as the reference: exact value, then a wildcard value, then key only; the last entry’s node holds the limit', () => {
    const { level } = parseEnvoyConfig(
      `domain: d
descriptors:
  - key: a
    rate_limit: { unit: second, requests_per_unit: 1 }
    descriptors:
      - key: b
        value: x
        rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: a
    value: pre*
    rate_limit: { unit: hour, requests_per_unit: 3 }
  - key: a
    value: prefix
    rate_limit: { unit: day, requests_per_unit: 4 }
`,
      'rl.yaml',
    );
    const perUnit = (entries: [string, string][]) => findLimit(level, entries.map(([key, value]) => ({ key, value })))?.requestsPerUnit;
    assert.equal(perUnit([['a', 'zzz']]), 1);
    assert.equal(perUnit([['a', 'pre-1']]), 3);
    assert.equal(perUnit([['a', 'prefix']]), 4);
    assert.equal(perUnit([['a', 'zzz'], ['b', 'x']]), 2);
    assert.equal(perUnit([['a', 'zzz'], ['b', 'y']]), undefined);
    assert.equal(perUnit([['a', 'prefix'], ['b', 'x']]), undefined, 'the exact node has no children: the key-only node is not tried instead');
  });

  it('mistakes name file, line and field', () => {
    assert.match(errorOf('descriptors: []\n'), /^rl\.yaml:1: domain: config file cannot have empty domain$/);
    assert.match(errorOf('domain: d\ndescriptors:\n  - key: a\n    rate_limit: { unit: fortnight, requests_per_unit: 1 }\n'), /^rl\.yaml:4: descriptors\[0\]\.rate_limit\.unit: invalid rate limit unit 'fortnight' \(one of second/);
    assert.match(errorOf('domain: d\ndescriptors:\n  - key: a\n    value: b\n  - key: a\n    value: b\n'), /^rl\.yaml:5: descriptors\[1\]\.key: duplicate descriptor composite key 'd\.a_b'$/);
    assert.match(errorOf('domain: d\ndescriptors:\n  - key: a\n    rate_limit: { unlimited: true, unit: second }\n'), /unlimited: should not specify rate limit unit when unlimited/);
    assert.match(errorOf('domain: d\ndescriptors:\n  - key: a\n    rate_limit: { unit: second, requests_per_unit: 1 }\n    sluice: { policy: token_bucket, capacity: 0, refillPerSecond: 1 }\n'), /^rl\.yaml:5: descriptors\[0\]\.sluice\.capacity: must be at least 1$/);
    assert.match(errorOf('domain: d\ndescriptors:\n  - key: a\n    sluice: { onStoreDown: open }\n'), /descriptors\[0\]\.rate_limit: is required with sluice/);
    assert.match(errorOf('domain: d\ndescriptors:\n  - key: a\n    ratelimit: {}\n'), /^rl\.yaml:4: descriptors\[0\]\.ratelimit: config error, unknown key 'ratelimit'$/);
  });

  it('several files are several domains; a domain twice is an error; a directory reads its YAML files', () => {
    writeFileSync(join(dir, 'a.yaml'), 'domain: one\n');
    writeFileSync(join(dir, 'b.yml'), 'domain: two\n');
    writeFileSync(join(dir, 'notes.txt'), 'ignored');
    assert.deepEqual([...loadEnvoyConfig([dir]).keys()], ['one', 'two']);
    writeFileSync(join(dir, 'c.yaml'), 'domain: one\n');
    assert.throws(() => loadEnvoyConfig([dir]), /c\.yaml:1: domain: duplicate domain 'one' in config file/);
  });

  it('sluice.yaml: decisionService fields, SLUICE_* variables, and the envoy file’s own errors', () => {
    const base = "routes: [{ id: r, path: /r, upstream: 'http://127.0.0.1:9' }]\n";
    const config = parseConfig(`${base}decisionService: { envoyConfig: ratelimit-config.yaml }\n`, { baseDir: EXAMPLES, env: { SLUICE_GRPC_LISTEN: '127.0.0.1:9090', SLUICE_DECISION_LISTEN: '127.0.0.1:9091' } });
    assert.deepEqual(config.decisionService.grpcListen, { host: '127.0.0.1', port: 9090 });
    assert.deepEqual(config.decisionService.httpListen, { host: '127.0.0.1', port: 9091 });
    assert.equal(config.decisionService.refusedStatus, 429);
    assert.deepEqual([...config.decisionService.domains.keys()], ['shop']);
    assert.throws(() => parseConfig(`${base}decisionService: { refusedStatus: 500 }\n`), /config:2: decisionService\.refusedStatus: must be a 4xx status/);
    writeFileSync(join(dir, 'bad.yaml'), 'domain: d\ndescriptors:\n  - value: x\n');
    assert.throws(() => parseConfig(`${base}decisionService: { envoyConfig: bad.yaml }\n`, { baseDir: dir }), /bad\.yaml:3: descriptors\[0\]\.key: descriptor has empty key/);
  });

  it('sluice check prints the warning of a file with a reference key out of place, and passes', () => {
    writeFileSync(join(dir, 'misplaced.yaml'), 'domain: d\ndescriptors:\n  - key: a\n    replaces: [{ name: x }]\n');
    writeFileSync(join(dir, 'sluice.yaml'), "routes: [{ id: r, path: /r, upstream: 'http://127.0.0.1:9' }]\ndecisionService: { envoyConfig: misplaced.yaml }\n");
    const checked = spawnSync(process.execPath, [...sluiceCli(), 'check', '--config', join(dir, 'sluice.yaml')], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(checked.status, 0, checked.stderr);
    assert.equal(checked.stderr, `warning: ${join(dir, 'misplaced.yaml')}: ignored, as envoyproxy/ratelimit ignores them: descriptors[0].replaces (line 4) is read only in rate_limit\n`);
  });
});
