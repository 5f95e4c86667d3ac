// USE_PROMETHEUS=true: the series of the reference's built-in mapper
// (default_mapper.yaml), names and labels, read from /metrics after real gRPC
// calls; the statistics key and the hit counts as the reference makes them.
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import { engineFromConfig } from '../../src/app.js';
import { parseEnvoyConfig } from '../../src/decision-service/envoy-config.js';
import { matchDescriptor } from '../../src/decision-service/descriptor-tree.js';
import { labelsOfStatKey } from '../../src/decision-service/reference/prometheus.js';
import { type RunningRatelimit, startRatelimitService } from '../../src/decision-service/reference/run.js';
import { referenceSettings } from '../../src/decision-service/reference/settings.js';
import { sluiceConfigOf } from '../../src/decision-service/reference/sluice-config.js';
import { hitCountsOf } from '../../src/decision-service/reference/stat-hits.js';
import { statKeyOf } from '../../src/decision-service/rls-stat-key.js';
import type { Outcome } from '../../src/decision-service/rls-status.js';
import { call } from '../helpers/gateway-support.js';
import { tempDir } from './ratelimit-support.js';
import { descriptor, rlsClient } from '../helpers/decision-service-support.js';

const CONFIG = `domain: shop
descriptors:
  - key: api_key
    rate_limit: { unit: minute, requests_per_unit: 2 }
  - key: user
    detailed_metric: true
    rate_limit: { unit: minute, requests_per_unit: 5 }
  - key: path
    value: /orders
    descriptors:
      - key: remote_address
        rate_limit: { unit: second, requests_per_unit: 10 }
  - key: file
    value: "files/*"
    value_to_metric: true
    rate_limit: { unit: hour, requests_per_unit: 10 }
`;

describe('the reference’s statistics key', () => {
  const { level } = parseEnvoyConfig(CONFIG, 'rl.yaml');
  const keyOf = (...pairs: [string, string][]) => {
    const entries = pairs.map(([key, value]) => ({ key, value }));
    return statKeyOf('shop', entries, matchDescriptor(level, entries)!);
  };
  it('the configured path: a key-only node is its key, a value node key_value, nested parts joined', () => {
    assert.equal(keyOf(['api_key', 'secret-1']), 'shop.api_key');
    assert.equal(keyOf(['path', '/orders'], ['remote_address', '10.0.0.1']), 'shop.path_/orders.remote_address');
  });
  it('detailed_metric: the request’s entries; value_to_metric on a wildcard: the request’s value', () => {
    assert.equal(keyOf(['user', 'alice']), 'shop.user_alice');
    assert.equal(keyOf(['file', 'files/a.txt']), 'shop.file_files/a.txt');
  });
  it('the mapper’s labels: two parts {domain, key1}, three or more {domain, key1, key2}', () => {
    assert.deepEqual(labelsOfStatKey('shop.api_key'), { domain: 'shop', key1: 'api_key' });
    assert.deepEqual(labelsOfStatKey('shop.path_/orders.remote_address.more'), { domain: 'shop', key1: 'path_/orders', key2: 'remote_address' });
  });
});

describe('hit counts, as base_limiter.go counts them (limit 10, NEAR_LIMIT_RATIO 0.8)', () => {
  const outcome = (hits: number, remaining: number, over: boolean, shadow = false): Outcome =>
    ({ plan: { hits, reported: { requestsPerUnit: 10 }, shadow }, decisions: [{ remaining }], over }) as unknown as Outcome;
  const cases: [string, Outcome, Record<string, number>][] = [
    ['well within', outcome(1, 9, false), { total_hits: 1, within_limit: 1, near_limit: 0, over_limit: 0, shadow_mode: 0 }],
    ['into the near range (8 → 9)', outcome(1, 1, false), { total_hits: 1, within_limit: 1, near_limit: 1, over_limit: 0, shadow_mode: 0 }],
    ['three hits crossing the threshold (7 → 10)', outcome(3, 0, false), { total_hits: 3, within_limit: 3, near_limit: 2, over_limit: 0, shadow_mode: 0 }],
    ['already at the limit', outcome(1, 0, true), { total_hits: 1, within_limit: 0, near_limit: 0, over_limit: 1, shadow_mode: 0 }],
    ['four hits from 8: 2 near, 2 over', outcome(4, 2, true), { total_hits: 4, within_limit: 0, near_limit: 2, over_limit: 2, shadow_mode: 0 }],
    ['shadow_mode over', outcome(2, 0, true, true), { total_hits: 2, within_limit: 0, near_limit: 0, over_limit: 2, shadow_mode: 2 }],
  ];
  for (const [name, given, want] of cases) it(name, () => assert.deepEqual({ ...hitCountsOf(given, 0.8) }, want));
});

describe('/metrics at PROMETHEUS_ADDR/PROMETHEUS_PATH after gRPC calls', () => {
  const root = tempDir('sluice-prometheus-');
  mkdirSync(join(root, 'config'));
  writeFileSync(join(root, 'config', 'shop.yaml'), CONFIG);
  let service: RunningRatelimit;
  before(async () => {
    const env = { RUNTIME_ROOT: root, GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', HOST: '127.0.0.1', PORT: '0', DEBUG_HOST: '127.0.0.1', DEBUG_PORT: '0', USE_PROMETHEUS: 'true', PROMETHEUS_ADDR: '127.0.0.1:0', PROMETHEUS_PATH: '/stats/prometheus' };
    const settings = referenceSettings(env);
    const config = sluiceConfigOf(settings, env);
    const logger = pino({ level: 'silent' });
    service = await startRatelimitService(settings, config, engineFromConfig(config, logger), logger);
  });
  const metricsShow = async (pattern: RegExp) => {
    for (let i = 0; i < 400 && !pattern.test((await call(service.metricsUrl!)).body); i++) await new Promise((done) => setTimeout(done, 25));
    assert.match((await call(service.metricsUrl!)).body, pattern);
  };
  after(async () => {
    await service?.close(0);
    rmSync(root, { recursive: true, force: true });
  });

  it('serves the mapper’s series with domain/key1/key2, the call counters and the response time', async () => {
    const client = rlsClient(service.grpcAddress!);
    try {
      for (let i = 0; i < 3; i++) await client.ask({ domain: 'shop', descriptors: [descriptor(['api_key', 'k1'])] });
      await client.ask({ domain: 'shop', descriptors: [descriptor(['user', 'alice']), descriptor(['path', '/orders'], ['remote_address', '10.0.0.1'])] });
      await assert.rejects(client.ask({ domain: '', descriptors: [descriptor(['api_key', 'k1'])] }));
    } finally {
      client.close();
    }
    assert.equal((await call(`${service.metricsUrl!.replace('/stats/prometheus', '/metrics')}`)).status, 404);
    const text = (await call(service.metricsUrl!)).body;
    const want = [
      'ratelimit_service_rate_limit_total_hits{domain="shop",key1="api_key"} 3',
      'ratelimit_service_rate_limit_within_limit{domain="shop",key1="api_key"} 2',
      'ratelimit_service_rate_limit_over_limit{domain="shop",key1="api_key"} 1',
      'ratelimit_service_rate_limit_near_limit{domain="shop",key1="api_key"} 1',
      'ratelimit_service_rate_limit_shadow_mode{domain="shop",key1="api_key"} 0',
      'ratelimit_service_rate_limit_total_hits{domain="shop",key1="user_alice"} 1',
      'ratelimit_service_rate_limit_total_hits{domain="shop",key1="path_/orders",key2="remote_address"} 1',
      'ratelimit_service_total_requests{grpc_method="ShouldRateLimit"} 5',
      'ratelimit_service_should_rate_limit_error{err_type="service_error"} 1',
      'ratelimit_service_response_time_seconds_count{grpc_method="ShouldRateLimit"} 5',
      'ratelimit_service_config_load_success 1',
    ];
    for (const line of want) assert.ok(text.includes(`${line}\n`), `${line} in\n${text}`);
  });

  it('a folder that fails to load counts in config_load_error; a good one in config_load_success', async () => {
    writeFileSync(join(root, 'config', 'shop.yaml'), 'domain: shop\ndescriptors:\n  - value: no-key\n');
    writeFileSync(join(root, 'config', 'other.yaml'), 'domain: other\n');
    await metricsShow(/^ratelimit_service_config_load_error [1-9]/m);
    assert.match((await call(service.metricsUrl!)).body, /^ratelimit_service_config_load_success 1$/m);
    writeFileSync(join(root, 'config', 'shop.yaml'), CONFIG);
    await metricsShow(/^ratelimit_service_config_load_success [2-9]/m);
  });
});
