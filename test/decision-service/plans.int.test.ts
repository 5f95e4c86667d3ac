// The Envoy face with plans (docs/plans.md#envoy), over gRPC as Envoy calls
// it, on real Redis, with the embedded rule store: a descriptor's `plan` entry
// naming a plan is limited by that plan's limit (changed live through the
// admin API), a caller moved to another plan keeps its bucket, and a value
// naming no plan leaves the descriptor as the reference answers it. A `tenant`
// entry (a JWT claim that Envoy's jwt_authn put in a header) is limited by the
// tenant's override, own rule or plan, and as configured when it has none.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { eventually } from '../helpers/poll.js';
import { call } from '../helpers/gateway-support.js';
import { descriptor, type RlsClient, rlsClient, startDecisionSluice } from '../helpers/decision-service-support.js';

const TOKEN = 'plans-envoy-admin-token-0123456789';
const DOMAIN = `
domain: api
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 50 }
  - key: tenant
    descriptors:
      - key: team
        rate_limit: { name: per-team, unit: hour, requests_per_unit: 40 }
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

  describe('a tenant entry', () => {
    const bucket = (capacity: number) => ({ policy: 'token_bucket', capacity, refillPerSecond: 0.001 });

    it("is limited by the tenant's own rule of the domain as a route, per the other entries", async () => {
      assert.equal(await admin('PUT', '/rules/acme/api', bucket(2)), 200);
      await eventually(async () => assert.equal((await ask(['tenant', 'acme'], ['user', 'probe'])).statuses[0].current_limit?.requests_per_unit, 2), 1000);
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push((await ask(['tenant', 'acme'], ['user', 'ann'])).overall_code);
      assert.deepEqual(answers, ['OK', 'OK', 'OVER_LIMIT']);
      assert.equal((await ask(['tenant', 'acme'], ['user', 'bob'])).overall_code, 'OK', 'another user of the tenant, another bucket');
      assert.equal((await ask(['tenant', 'acme-2'], ['user', 'ann'])).statuses[0].code, 'OK', 'another tenant: its own bucket');
    });

    it("by its plan: the descriptor's plan entry first, else the tenant's assignment; moving it keeps its bucket", async () => {
      assert.equal(await admin('PUT', '/assignments/tenant/beta', { plan: 'pro' }), 200);
      // pro's global limit, 10 since the test above changed it
      await eventually(async () => assert.equal((await ask(['tenant', 'beta'], ['user', 'probe'])).statuses[0].current_limit?.requests_per_unit, 10), 1000);
      assert.equal((await ask(['tenant', 'beta'], ['user', 'ann'])).statuses[0].limit_remaining, 9);
      assert.deepEqual((await ask(['tenant', 'beta'], ['plan', 'free'], ['user', 'cid'])).statuses[0].current_limit, { requests_per_unit: 1, unit: 'HOUR' });
      assert.equal(await admin('PUT', '/assignments/tenant/beta', { plan: 'free' }), 200);
      await eventually(async () => assert.deepEqual((await ask(['tenant', 'beta'], ['user', 'ann'])).statuses[0].current_limit, { requests_per_unit: 1, unit: 'HOUR' }), 1000);
      assert.equal((await ask(['tenant', 'beta'], ['user', 'ann'])).overall_code, 'OVER_LIMIT', 'its bucket kept: what it used under pro counts under free');
    });

    it("its override of the matched limit comes first; a tenant with nothing of its own is limited as configured", async () => {
      const configured = await ask(['tenant', 'nobody'], ['team', 'red']);
      assert.deepEqual(configured.statuses[0].current_limit, { name: 'per-team', requests_per_unit: 40, unit: 'HOUR' }, 'no rule, plan or override: the configured limit');
      assert.equal(await admin('PUT', '/limits/per-team/overrides/tenant:gamma', bucket(1)), 200);
      await eventually(async () => assert.equal((await ask(['tenant', 'gamma'], ['team', 'blue'])).statuses[0].current_limit?.requests_per_unit, 1), 1000);
      assert.equal((await ask(['tenant', 'gamma'], ['team', 'blue'])).overall_code, 'OVER_LIMIT');
      assert.deepEqual((await ask(['tenant', 'gamma'], ['user', 'x'])).statuses, [{ code: 'OK' }], 'the override is of per-team only; nothing else limits this one');
      assert.deepEqual((await ask(['tenant', '~rls.abc'], ['team', 'red'])).statuses[0].current_limit, { name: 'per-team', requests_per_unit: 40, unit: 'HOUR' }, 'not a tenant id: as configured');
    });
  });
});
