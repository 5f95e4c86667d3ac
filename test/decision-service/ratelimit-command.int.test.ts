// `sluice ratelimit` started as the reference's `ratelimit` binary is, with
// nothing but its environment variables and a runtime folder: asked over gRPC
// and /json, its ConfigMap's `..data` symlink swapped, /rlconfig and /metrics read.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { call } from '../helpers/gateway-support.js';
import { ConfigMapFolder, type RatelimitProcess, startRatelimitProcess, tempDir, waitForRlconfig } from './ratelimit-support.js';
import { descriptor, rlsClient } from '../helpers/decision-service-support.js';
import { sluiceCli } from '../helpers/cli.js';

const limitOf = (perMinute: number) => `domain: shop\ndescriptors:\n  - key: api_key\n    rate_limit: { unit: minute, requests_per_unit: ${perMinute} }\n`;

describe('sluice ratelimit: the reference binary’s environment, a ConfigMap folder', () => {
  const root = tempDir('sluice-ratelimit-');
  // RUNTIME_ROOT=/data RUNTIME_SUBDIRECTORY=ratelimit, the ConfigMap mounted at /data/ratelimit/config (as in the reference's Kubernetes examples).
  const folder = new ConfigMapFolder(join(root, 'ratelimit', 'config'));
  let service: RatelimitProcess;
  before(async () => {
    folder.swap({ 'shop.yaml': limitOf(2) });
    service = await startRatelimitProcess({ RUNTIME_ROOT: root, RUNTIME_SUBDIRECTORY: 'ratelimit', RUNTIME_WATCH_ROOT: 'false', USE_PROMETHEUS: 'true', USE_STATSD: 'false', MEMCACHE_HOST_PORT: '127.0.0.1:11211' });
  });
  after(async () => {
    await service?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('answers over gRPC and /json from the folder’s files, and /healthcheck', async () => {
    const client = rlsClient(service.grpc);
    try {
      const answer = await client.ask({ domain: 'shop', descriptors: [descriptor(['api_key', 'k1'])] });
      assert.equal(answer.overall_code, 'OK');
      assert.equal(answer.statuses[0].current_limit.requests_per_unit, 2);
      assert.equal(answer.statuses[0].limit_remaining, 1);
    } finally {
      client.close();
    }
    const json = await call(`${service.http}/json`, { method: 'POST', body: JSON.stringify({ domain: 'shop', descriptors: [{ entries: [{ key: 'api_key', value: 'k1' }] }] }) });
    assert.equal(json.status, 200);
    assert.equal(JSON.parse(json.body).overallCode, 'OK');
    const refused = await call(`${service.http}/json`, { method: 'POST', body: JSON.stringify({ domain: 'shop', descriptors: [{ entries: [{ key: 'api_key', value: 'k1' }] }] }) });
    assert.equal(refused.status, 429);
    assert.equal((await call(`${service.http}/healthcheck`)).status, 200);
    const metrics = (await call(service.metrics)).body;
    assert.match(metrics, /^ratelimit_service_rate_limit_total_hits\{domain="shop",key1="api_key"\} 3$/m);
    assert.match(metrics, /^ratelimit_service_rate_limit_over_limit\{domain="shop",key1="api_key"\} 1$/m);
    assert.match(metrics, /^ratelimit_service_total_requests\{grpc_method="ShouldRateLimit"\} 1$/m, 'gRPC calls only, as the reference’s interceptor counts them');
  });

  it('logs each variable it does not use once, and starts anyway', () => {
    const ignored = service.logs.filter((line) => line.variable !== undefined).map((line) => line.variable);
    assert.deepEqual(ignored.sort(), ['MEMCACHE_HOST_PORT', 'USE_STATSD']);
    assert.match(String(service.logs.find((line) => line.variable === 'USE_STATSD')?.['@message']), /USE_STATSD is not used by Sluice: Sluice serves Prometheus only/);
  });

  it('serves /rlconfig in the reference’s words, and reloads when kubelet swaps ..data', async () => {
    assert.equal((await call(`${service.debug}/rlconfig`)).body, 'shop.api_key: unit=MINUTE requests_per_unit=2, shadow_mode: false\n');
    folder.swap({ 'shop.yaml': limitOf(7), 'other.yaml': 'domain: other\ndescriptors:\n  - key: path\n    value: /a\n    rate_limit: { unit: second, requests_per_unit: 1 }\n' });
    await waitForRlconfig(service.debug, /requests_per_unit=7/);
    const client = rlsClient(service.grpc);
    try {
      const answer = await client.ask({ domain: 'shop', descriptors: [descriptor(['api_key', 'k2'])] });
      assert.equal(answer.statuses[0].current_limit.requests_per_unit, 7);
      const other = await client.ask({ domain: 'other', descriptors: [descriptor(['path', '/a'])] });
      assert.equal(other.statuses[0].current_limit.unit, 'SECOND');
    } finally {
      client.close();
    }
  });

  it('a swap to a bad file keeps the last good config and logs why, naming the file and line', async () => {
    const from = service.logs.length;
    folder.swap({ 'shop.yaml': 'domain: shop\ndescriptors:\n  - key: api_key\n    rate_limit: { unit: fortnight, requests_per_unit: 1 }\n' });
    const logged = await service.waitForLog(/^config folder not reloaded, the last good config stays: .*shop\.yaml:4: descriptors\[0\]\.rate_limit\.unit: invalid rate limit unit 'fortnight'/, from);
    assert.equal(logged.level, 'error', 'logrus’s level name');
    assert.match((await call(`${service.debug}/rlconfig`)).body, /shop\.api_key: unit=MINUTE requests_per_unit=7/);
    folder.swap({ 'shop.yaml': limitOf(9) });
    await waitForRlconfig(service.debug, /requests_per_unit=9/);
  });
});

describe('sluice ratelimit: a bad variable or folder stops it at start, naming it', () => {
  const root = tempDir('sluice-ratelimit-bad-');
  mkdirSync(join(root, 'config'));
  writeFileSync(join(root, 'config', 'a.yaml'), limitOf(1));
  mkdirSync(join(root, 'twice'));
  writeFileSync(join(root, 'twice', 'a.yaml'), limitOf(1));
  writeFileSync(join(root, 'twice', 'b.yaml'), 'domain: shop\n');
  after(() => rmSync(root, { recursive: true, force: true }));
  const run = (env: Record<string, string>) => spawnSync(process.execPath, [...sluiceCli(), 'ratelimit'], { encoding: 'utf8', timeout: 30_000, env: { PATH: process.env.PATH ?? '', RUNTIME_ROOT: root, ...env } });
  const cases: [string, Record<string, string>, RegExp][] = [
    ['a port that is not one', { GRPC_PORT: 'eighty' }, /^sluice ratelimit: GRPC_PORT: must be a port from 0 to 65535, not "eighty"$/],
    ['a boolean that is not one', { RUNTIME_WATCH_ROOT: 'yes' }, /^sluice ratelimit: RUNTIME_WATCH_ROOT: must be true or false, not "yes"$/],
    ['an unknown log level', { LOG_LEVEL: 'loud' }, /^sluice ratelimit: LOG_LEVEL: must be one of trace, debug, info, warn, error, fatal, panic/],
    ['a unix socket for Redis', { REDIS_URL: '/var/run/nutcracker/ratelimit.sock' }, /^sluice ratelimit: REDIS_SOCKET_TYPE: unix: Sluice reaches Redis over TCP only/],
    ['an unknown Redis type', { REDIS_SOCKET_TYPE: 'tcp', REDIS_URL: '127.0.0.1:6379', REDIS_TYPE: 'ring' }, /^sluice ratelimit: REDIS_TYPE: must be single, cluster or sentinel, not "ring"$/],
    ['a missing config folder', { RUNTIME_APPDIRECTORY: 'nowhere' }, /^sluice ratelimit: .*nowhere: cannot read: ENOENT/],
    ['a Sluice option out of range', { SLUICE_RESILIENCE: '{breaker: {failureThreshold: 0}}' }, /^sluice ratelimit: SLUICE_RESILIENCE: resilience\.breaker\.failureThreshold: must be at least 1$/],
    ['two files of one domain without MERGE_DOMAIN_CONFIG', { RUNTIME_APPDIRECTORY: 'twice' }, /^sluice ratelimit: .*twice\/b\.yaml:1: domain: duplicate domain 'shop' in config file/],
  ];
  for (const [name, env, want] of cases) {
    it(name, () => {
      const result = run(env);
      assert.equal(result.status, 2, result.stderr);
      assert.match(result.stderr.trim(), want);
    });
  }
});

describe('sluice ratelimit: a listener that cannot bind', () => {
  it('exits 1 naming the address, with Redis configured (nothing keeps the process alive)', async () => {
    const { createServer } = await import('node:net');
    const taken = createServer().listen(0, '127.0.0.1');
    await new Promise((done) => taken.once('listening', done));
    const port = (taken.address() as { port: number }).port;
    const root = tempDir('sluice-ratelimit-taken-');
    mkdirSync(join(root, 'config'));
    try {
      const env = { PATH: process.env.PATH ?? '', RUNTIME_ROOT: root, HOST: '127.0.0.1', PORT: String(port), GRPC_HOST: '127.0.0.1', GRPC_PORT: '0', DEBUG_PORT: '0', DEBUG_HOST: '127.0.0.1', REDIS_SOCKET_TYPE: 'tcp', REDIS_URL: '127.0.0.1:1' };
      const result = spawnSync(process.execPath, [...sluiceCli(), 'ratelimit'], { encoding: 'utf8', timeout: 30_000, env });
      assert.equal(result.status, 1, result.stderr);
      assert.match(result.stderr, new RegExp(`EADDRINUSE: address already in use 127\\.0\\.0\\.1:${port}`));
    } finally {
      taken.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
