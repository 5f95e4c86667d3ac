// envoyproxy/ratelimit configs of our own saying what the reference's
// integration runtime configs, its examples/ and its README's examples say,
// with day and hour units where the reference counts per second or minute (so
// no count here can straddle a window's edge while a test runs).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BASIC, WILDCARD } from './cases.js';

export const REFERENCE_CONFIGS: Record<string, string> = {
  // the config tests' lookups (cases.ts), asked over gRPC
  'config-basic.yaml': BASIC.replace('domain: basic', 'domain: config-basic'),
  'wildcard.yaml': WILDCARD,
  // test/integration/runtime/current/ratelimit/config/basic.yaml
  'basic.yaml': `
domain: basic
descriptors:
  - key: key1
    rate_limit: { unit: second, requests_per_unit: 50 }
  - key: one_per_day
    rate_limit: { unit: day, requests_per_unit: 1 }
`,
  // another.yaml: two limits in one request, and a third for reset
  'another.yaml': `
domain: another
descriptors:
  - key: key2
    rate_limit: { unit: day, requests_per_unit: 20 }
  - key: key3
    rate_limit: { unit: day, requests_per_unit: 10 }
  - key: key4
    rate_limit: { unit: day, requests_per_unit: 20 }
`,
  // share_threshold.yaml
  'share.yaml': `
domain: share-threshold-test
descriptors:
  - key: files
    value: files/*
    share_threshold: true
    rate_limit: { unit: hour, requests_per_unit: 10 }
  - key: files_no_share
    value: files_no_share/*
    rate_limit: { unit: hour, requests_per_unit: 10 }
`,
  // examples/ratelimit/config/example.yaml: replaces inside rate_limit, a banned value (0), shadow, unlimited, quota_mode, metadata
  'example.yaml': `
domain: rl
descriptors:
  - key: category
    value: account
    rate_limit:
      replaces:
        - name: bkthomps
        - name: fake_name
      unit: day
      requests_per_unit: 4
  - key: source_cluster
    value: proxy
    descriptors:
      - key: destination_cluster
        value: fake
        rate_limit: { name: fake_name, unit: day, requests_per_unit: 2 }
  - key: foo
    rate_limit: { unit: day, requests_per_unit: 2 }
    descriptors:
      - key: bar
        rate_limit: { unit: day, requests_per_unit: 3 }
      - key: bar
        value: bkthomps
        rate_limit: { name: bkthomps, unit: day, requests_per_unit: 1 }
      - key: bar
        value: banned
        rate_limit: { name: banned_limit, unit: day, requests_per_unit: 0 }
      - key: baz
        value: shady
        rate_limit: { unit: day, requests_per_unit: 2 }
        shadow_mode: true
      - key: bay
        rate_limit: { unlimited: true }
  - key: unspec
    detailed_metric: true
    rate_limit: { unit: day, requests_per_unit: 2 }
  - key: service
    value: service_1
    quota_mode: true
    rate_limit: { unit: day, requests_per_unit: 1 }
    metadata:
      service_with_quota: { name: "service_1" }
  - key: service
    value: service_2
    quota_mode: true
    rate_limit: { unit: day, requests_per_unit: 2 }
    metadata:
      service_with_quota: { name: "service_2" }
`,
  // README examples 2, 3, 4, 7, 9 and a week
  'readme.yaml': `
domain: readme
descriptors:
  - key: message_type
    value: marketing
    descriptors:
      - key: to_number
        rate_limit: { unit: day, requests_per_unit: 5 }
  - key: to_number
    rate_limit: { unit: day, requests_per_unit: 100 }
  - key: remote_address
    rate_limit: { unit: day, requests_per_unit: 10 }
  - key: remote_address
    value: 50.0.0.5
    rate_limit: { unit: day, requests_per_unit: 0 }
  - key: key
    value: value
    rate_limit: { unit: day, requests_per_unit: 300 }
  - key: key_1
    value: value_1
    descriptors:
      - key: user
        value: bkthomps
        rate_limit: { name: specific_limit, unit: day, requests_per_unit: 5 }
  - key: key_2
    value: value_2
    descriptors:
      - key: user
        value: bkthomps
        rate_limit:
          replaces: [{ name: specific_limit }]
          unit: day
          requests_per_unit: 10
  - key: path
    value: /api/*/action
    rate_limit: { unit: day, requests_per_unit: 20 }
  - key: weekly
    rate_limit: { unit: week, requests_per_unit: 3 }
  - key: user
    rate_limit: { unit: day, requests_per_unit: 4 }
`,
  // README examples 1 (and examples/config.yaml), 5, 6, 8, 10 and 11's second block
  'mongo.yaml': `
domain: mongo_cps
descriptors:
  - { key: database, value: users, rate_limit: { unit: second, requests_per_unit: 500 } }
  - { key: database, value: default, rate_limit: { unit: second, requests_per_unit: 500 } }
`,
  'internal.yaml': `
domain: internal
descriptors:
  - { key: ldap, rate_limit: { unlimited: true } }
  - { key: azure, rate_limit: { unit: minute, requests_per_unit: 100 } }
`,
  'example6.yaml': `
domain: example6
descriptors:
  - key: service
    descriptors:
      - { key: user, value: user-a, shadow_mode: true, rate_limit: { unit: second, requests_per_unit: 10 } }
      - { key: user, value: user-b, rate_limit: { unit: second, requests_per_unit: 20 } }
`,
  'example8.yaml': `
domain: example8
descriptors:
  - { key: key1, detailed_metric: true, rate_limit: { unit: minute, requests_per_unit: 10 } }
  - { key: key1, value: value1, rate_limit: { unit: minute, requests_per_unit: 20 } }
`,
  'example10.yaml': `
domain: example10
descriptors:
  - key: route
    value_to_metric: true
    descriptors:
      - key: http_method
        value_to_metric: true
        descriptors:
          - { key: subject_id, rate_limit: { unit: minute, requests_per_unit: 60 } }
  - key: user
    value_to_metric: true
    descriptors:
      - key: action
        value: read*
        value_to_metric: true
        descriptors:
          - { key: resource, rate_limit: { unit: minute, requests_per_unit: 100 } }
`,
  'example11.yaml': `
domain: example11_metrics
descriptors:
  - key: route
    value: api/*
    share_threshold: true
    value_to_metric: true
    descriptors:
      - { key: method, rate_limit: { unit: minute, requests_per_unit: 60 } }
`,
};

/** README blocks: a descriptor of each and the requests_per_unit it lands on ('unlimited', or undefined: none). */
export const README_LOOKUPS: [string, [string, string][], number | 'unlimited' | undefined][] = [
  ['mongo_cps', [['database', 'users']], 500],
  ['mongo_cps', [['database', 'default']], 500],
  ['mongo_cps', [['database', 'other']], undefined],
  ['internal', [['ldap', 'x']], 'unlimited'],
  ['internal', [['azure', 'x']], 100],
  ['example6', [['service', 'auth-service'], ['user', 'user-a']], 10],
  ['example6', [['service', 'auth-service'], ['user', 'user-b']], 20],
  ['example8', [['key1', 'unspecified_value']], 10],
  ['example8', [['key1', 'value1']], 20],
  ['example10', [['route', 'api'], ['http_method', 'GET'], ['subject_id', '123']], 60],
  ['example10', [['user', 'alice'], ['action', 'readfile'], ['resource', 'documents']], 100],
  ['example10', [['user', 'alice'], ['action', 'write'], ['resource', 'documents']], undefined],
  ['example11_metrics', [['route', 'api/v1'], ['method', 'GET']], 60],
];

/** The configs in a fresh directory (the caller removes it). */
export function writeReferenceConfigs(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-reference-'));
  for (const [name, text] of Object.entries(REFERENCE_CONFIGS)) writeFileSync(join(dir, name), text);
  return dir;
}
