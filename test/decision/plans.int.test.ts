// The Envoy face with plans (docs/plans.md#envoy), over gRPC as Envoy calls
// it, on real Redis, with the embedded rule store: a descriptor's `plan` entry
// naming a plan is limited by that plan's limit (changed live through the
// admin API), a caller moved to another plan keeps its bucket, and a value
// naming no plan leaves the descriptor as the reference answers it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { eventually } from '../rules/store-contract.js';
import { call } from '../gateway/support.js';
import { descriptor, type RlsClient, rlsClient, startDecisionSluice } from './support.js';

const TOKEN = 'plans-envoy-admin-token-0123456789';
const DOMAIN = `
domain: api
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 50 }
`;

const yamlFor = (redisUrl: string, envoyFile: string): string => `
routes:
  - { id: r, path: /r, upstream: 'http://127.0.0.1:9' }
store: { url: ${redisUrl}, deadlineMs: 2000 }
decisionService:
  envoyConfig: [${JSON.stringify(envoyFile)}]
`;

describe('Envoy descriptors select a plan', () => {
  let redis: RedisServer;
  let sluice: RunningSluice;
  let client: RlsClient;
  let dir: string;
  const admin = async (method: string, path: string, body?: unknown) =>
    (await call(`${sluice.adminUrl}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) })).status;
  const ask = (...pairs: [string, string][]) => client.ask({ domain: 'api', descriptors: [descriptor(...pairs)] });

  before(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'sluice-rls-plans-'));
    writeFileSync(join(dir, 'api.yaml'), DOMAIN);
    const env = { SLUICE_ADMIN_LISTEN: '127.0.0.1:0', SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DATA_DIR: join(dir, 'data') };
    sluice = await startDecisionSluice(yamlFor(redis.url, join(dir, 'api.yaml')), env, { ruleStore: true, admin: true });
    client = rlsClient(sluice.grpcAddress!);
    for (const [plan, capacity] of [['free', 1], ['pro', 3]] as const) {
      assert.equal(await admin('POST', '/plans', { name: plan }), 201);
      assert.equal(await admin('PUT', `/plans/${plan}/limits/global`, { policy: 'token_bucket', capacity, refillPerSecond: 0.001 }), 200);
    }
    await eventually(async () => assert.equal((await ask(['plan', 'pro'], ['user', 'probe'])).statuses[0].current_limit?.requests_per_unit, 3), 1000);
  });
  after(async () => {
    client?.close();
    await sluice?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("limits a descriptor by its plan's limit, per the other entries' values", async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await ask(['plan', 'pro'], ['user', 'ann']));
    assert.deepEqual(answers.map((a) => a.overall_code), ['OK', 'OK', 'OK', 'OVER_LIMIT']);
    assert.equal((await ask(['plan', 'pro'], ['user', 'bob'])).overall_code, 'OK', 'another user, another bucket');
    assert.deepEqual((await ask(['plan', 'free'], ['user', 'cid'])).statuses[0].current_limit, { requests_per_unit: 1, unit: 'HOUR' });
  });

  it('a plan that does not exist: the descriptor is answered as the reference would (here: no limit)', async () => {
    const answer = await ask(['plan', 'platinum'], ['user', 'dan']);
    assert.deepEqual(answer.statuses, [{ code: 'OK' }]);
    assert.equal((await ask(['user', 'dan'])).statuses[0].current_limit.requests_per_unit, 50, 'no plan entry: the configured limit');
  });

  it("a caller moved to another plan keeps its bucket, and a plan's change applies live", async () => {
    assert.equal((await ask(['plan', 'pro'], ['user', 'eve'])).statuses[0].limit_remaining, 2);
    assert.equal((await ask(['plan', 'pro'], ['user', 'eve'])).statuses[0].limit_remaining, 1);
    assert.equal((await ask(['plan', 'free'], ['user', 'eve'])).overall_code, 'OVER_LIMIT', 'two used: nothing left under free');
    assert.equal((await ask(['plan', 'pro'], ['user', 'eve'])).statuses[0].limit_remaining, 0, 'back on pro: the two used still count');
    assert.equal(await admin('PUT', '/plans/pro/limits/global', { policy: 'token_bucket', capacity: 10, refillPerSecond: 0.001 }), 200);
    await eventually(async () => assert.equal((await ask(['plan', 'pro'], ['user', 'fay'])).statuses[0].current_limit.requests_per_unit, 10), 1000);
  });
});
