// `sluice ratelimit` against the reference's last details, through its real
// listeners: gRPC health under the name `ratelimit`, /healthcheck's `OK`,
// no forward-auth /decide (404), a shadow_mode limit's hits counted as the
// reference counts them (over_limit and shadow_mode), and LOG_FORMAT=json in
// logrus's field names, with LOG_LEVEL=debug's lines.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as healthProto } from 'grpc-health-check';
import { call } from '../helpers/gateway-support.js';
import { startRedis } from '../helpers/redis-server.js';
import { ConfigMapFolder, type RatelimitProcess, startRatelimitProcess, tempDir } from './ratelimit-support.js';
import { atTopOfSecond, descriptor, EXAMPLES, rlsClient } from '../helpers/decision-service-support.js';

/** Three hits on the example's 1-per-second shadow limit, then its series: [total, within, over, shadow]. */
async function shadowCounts(service: RatelimitProcess): Promise<number[]> {
  const client = rlsClient(service.grpc);
  // The limit's window is the clock's own second (the reference's fixed window).
  await atTopOfSecond();
  try {
    for (let i = 0; i < 3; i++) {
      const answer = await client.ask({ domain: 'shop', descriptors: [descriptor(['generic_key', 'trial'])] });
      assert.equal(answer.overall_code, 'OK');
    }
  } finally {
    client.close();
  }
  const metrics = (await call(service.metrics)).body;
  const count = (stat: string) => Number(new RegExp(`^ratelimit_service_rate_limit_${stat}\\{domain="shop",key1="generic_key_trial"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 'NaN');
  return ['total_hits', 'within_limit', 'over_limit', 'shadow_mode'].map(count);
}

const exampleFolder = (root: string) => new ConfigMapFolder(join(root, 'config')).swap({ 'config.yaml': readFileSync(join(EXAMPLES, 'ratelimit-config.yaml'), 'utf8') });

describe('sluice ratelimit: the reference’s health names, /healthcheck, /decide and shadow_mode counts', () => {
  const root = tempDir('sluice-dropin-');
  let service: RatelimitProcess;
  before(async () => {
    exampleFolder(root);
    service = await startRatelimitProcess({ RUNTIME_ROOT: root, RUNTIME_SUBDIRECTORY: '', RUNTIME_WATCH_ROOT: 'false', USE_PROMETHEUS: 'true', LOG_LEVEL: 'debug' });
  });
  after(async () => {
    await service?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('grpc.health.v1 Check answers SERVING for "ratelimit" (and still for "")', async () => {
    const loaded = grpc.loadPackageDefinition(loadSync(healthProto, { enums: String })) as unknown as { grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } } };
    const health = new loaded.grpc.health.v1.Health(service.grpc, grpc.credentials.createInsecure()) as grpc.Client & Record<string, (...args: unknown[]) => unknown>;
    const check = (name: string) => new Promise<string>((done, fail) => health.Check!({ service: name }, (error: Error | null, answer: { status: string }) => (error ? fail(error) : done(answer.status))));
    try {
      assert.equal(await check('ratelimit'), 'SERVING');
      assert.equal(await check(''), 'SERVING');
    } finally {
      health.close();
    }
  });

  it('GET /healthcheck answers OK, as the reference writes it', async () => {
    const reply = await call(`${service.http}/healthcheck`);
    assert.deepEqual([reply.status, reply.body], [200, 'OK']);
  });

  it('/decide is not served on the reference’s HTTP listener: 404 with or without a URI', async () => {
    assert.equal((await call(`${service.http}/decide`)).status, 404);
    assert.equal((await call(`${service.http}/decide`, { headers: { 'x-original-uri': '/orders', 'x-forwarded-uri': '/orders', 'x-api-key': 'k' } })).status, 404);
  });

  it('three hits on the 1-per-second shadow limit: within 1, over_limit 2, shadow_mode 2, every answer OK', async () => {
    assert.deepEqual(await shadowCounts(service), [3, 1, 2, 2]);
  });

  it('LOG_FORMAT=json: @timestamp (RFC 3339), @message, level as a word; LOG_LEVEL=debug logs the config load and each descriptor, no value', async () => {
    const serving = await service.waitForLog(/^sluice ratelimit serving$/);
    assert.match(String(serving['@timestamp']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(serving.level, 'info');
    for (const field of ['msg', 'time', 'pid', 'hostname']) assert.equal(field in serving, false, `no pino ${field}`);
    const loaded = await service.waitForLog(/^config loaded$/);
    assert.deepEqual([loaded.level, loaded.domains], ['debug', ['shop']]);
    const from = service.logs.length;
    const client = rlsClient(service.grpc);
    try {
      await client.ask({ domain: 'shop', descriptors: [descriptor(['api_key', 'secret-key-value-1'])] });
    } finally {
      client.close();
    }
    const decided = await service.waitForLog(/^descriptor decided$/, from);
    assert.equal(decided.level, 'debug');
    assert.match(String((decided.cacheKeys as string[])[0]), /^~rls\./);
    assert.equal(JSON.stringify(service.logs).includes('secret-key-value-1'), false, 'no descriptor value in the log');
  });
});

describe('sluice ratelimit on Redis: a shadow_mode limit counted as the reference counts it', () => {
  const root = tempDir('sluice-dropin-redis-');
  const cleanup: (() => unknown)[] = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
    rmSync(root, { recursive: true, force: true });
  });

  it('three hits on the 1-per-second shadow limit: within 1, over_limit 2, shadow_mode 2', async () => {
    exampleFolder(root);
    const redis = await startRedis();
    cleanup.push(() => redis.stop());
    const service = await startRatelimitProcess({ RUNTIME_ROOT: root, RUNTIME_SUBDIRECTORY: '', RUNTIME_WATCH_ROOT: 'false', USE_PROMETHEUS: 'true', REDIS_SOCKET_TYPE: 'tcp', REDIS_URL: `127.0.0.1:${redis.port}` });
    cleanup.push(() => service.stop());
    assert.deepEqual(await shadowCounts(service), [3, 1, 2, 2]);
  });
});
