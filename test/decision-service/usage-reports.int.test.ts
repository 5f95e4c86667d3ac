// Usage reported after the fact to the decision service, on real Redis:
// Envoy's second ShouldRateLimit call of a `rate_limits` entry with
// `apply_on_stream_done` (marked by the `sluice_usage: report` entry, its
// hits_addend the tokens used) over the real gRPC listener, and forward-auth's
// POST /usage on the real HTTP listener. Both charge without refusing, a debt
// past empty included, and are counted in /metrics.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { usageReportedUnits, usageReports } from '../../src/metrics/usage.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { call } from '../helpers/gateway-support.js';
import { descriptor, type RlsClient, rlsClient, startDecisionSluice } from '../helpers/decision-service-support.js';

const DOMAIN = `
domain: llm
descriptors:
  - key: tenant_tokens
    rate_limit: { unit: minute, requests_per_unit: 1000 }
    sluice: { policy: token_bucket, capacity: 1000, refillPerSecond: 0.001 }
`;

const yamlFor = (redisUrl: string, envoyFile: string) => `
routes:
  - id: chat
    methods: [POST]
    path: /v1/chat/completions
    upstream: 'http://127.0.0.1:9'
    limits:
      - { id: chat-rpm, key: tenant, rule: { policy: token_bucket, capacity: 50, refillPerSecond: 0.001 } }
      - { id: chat-tpm, key: tenant, rule: { policy: token_bucket, capacity: 1000, refillPerSecond: 0.001 }, cost: { estimate: 100, from: { json: usage.total_tokens } } }
tenants:
  header: x-api-key
  keys: [{ key: key-report-0001, tenant: t1 }, { key: key-report-0002, tenant: t2 }, { key: key-report-0003, tenant: t3 }]
store: { url: ${redisUrl}, deadlineMs: 2000 }
decisionService:
  envoyConfig: ${JSON.stringify(envoyFile)}
  forwardAuthProxy: traefik
`;

/** The request phase's call: checks the tenant's tokens (hits_addend 0) before forwarding. */
const check = (tenant: string) => ({ domain: 'llm', descriptors: [{ ...descriptor(['tenant_tokens', tenant]), hits_addend: { value: 0 } }] });
/** The stream-done call: the same descriptor marked as a report, hits_addend the tokens used. */
const report = (tenant: string, tokens: number) => ({
  domain: 'llm',
  descriptors: [{ ...descriptor(['tenant_tokens', tenant], ['sluice_usage', 'report']), hits_addend: { value: tokens } }],
});

async function counted(face: string, result: string): Promise<number> {
  return (await usageReports.get()).values.find((value) => value.labels.face === face && value.labels.result === result)?.value ?? 0;
}

describe('usage reports to the decision service', () => {
  let redis: RedisServer;
  let sluice: RunningSluice;
  let client: RlsClient;
  let dir: string;
  before(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'sluice-usage-report-'));
    writeFileSync(join(dir, 'llm.yaml'), DOMAIN);
    sluice = await startDecisionSluice(yamlFor(redis.url, join(dir, 'llm.yaml')));
    client = rlsClient(sluice.grpcAddress!);
  });
  after(async () => {
    client?.close();
    await sluice?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('Envoy: a report charges its hits_addend to the bucket the request phase checks, OK past empty, and the next check is refused', async () => {
    const first = await client.ask(check('a'));
    assert.equal(first.overall_code, 'OK');
    assert.equal(first.statuses[0].limit_remaining, 1000);
    const charged = await client.ask(report('a', 600));
    assert.equal(charged.overall_code, 'OK');
    assert.equal(charged.statuses[0].code, 'OK');
    assert.equal(charged.statuses[0].limit_remaining, 400, 'the report landed on the same bucket the check looks at');
    assert.equal((await client.ask(check('a'))).statuses[0].limit_remaining, 400);
    // More than is left: still charged, never refused; the bucket is in debt.
    const past = await client.ask(report('a', 700));
    assert.equal(past.overall_code, 'OK');
    assert.equal(past.statuses[0].limit_remaining, 0);
    const refused = await client.ask({ domain: 'llm', descriptors: [descriptor(['tenant_tokens', 'a'])] });
    assert.equal(refused.overall_code, 'OVER_LIMIT', 'a request is refused while the debt stands');
    // A request-phase call that is refused charges nothing; the other tenant's bucket is its own.
    assert.equal((await client.ask(check('b'))).statuses[0].limit_remaining, 1000);
  });

  it('Envoy: a report above the whole capacity charges the capacity, counted as capped; a bad marker value is INVALID_ARGUMENT naming the entry', async () => {
    const before = await counted('envoy', 'capped');
    const answer = await client.ask(report('c', 5_000_000));
    assert.equal(answer.overall_code, 'OK');
    assert.equal(answer.statuses[0].limit_remaining, 0);
    assert.equal(await counted('envoy', 'capped'), before + 1);
    await assert.rejects(
      client.ask({ domain: 'llm', descriptors: [descriptor(['tenant_tokens', 'd'], ['sluice_usage', 'yes'])] }),
      (error: { code: number; details: string }) => error.code === 3 && error.details.includes('descriptors[0].entries[1].value'),
    );
  });

  describe('forward-auth POST /usage', () => {
    const forwarded = (apiKey: string) => ({ 'x-forwarded-method': 'POST', 'x-forwarded-uri': '/v1/chat/completions', 'x-api-key': apiKey });
    const decide = (apiKey: string) => call(`${sluice.decisionUrl}/decide`, { headers: forwarded(apiKey) });
    const usage = (apiKey: string, body: string) =>
      call(`${sluice.decisionUrl}/usage`, { method: 'POST', headers: { ...forwarded(apiKey), 'content-type': 'application/json' }, body });
    const tpmLeft = (reply: { headers: Record<string, unknown> }) => Number(reply.headers['x-ratelimit-remaining']);

    it('charges the usage-priced limit what was used less the estimate /decide reserved; other limits untouched; 204', async () => {
      const unitsBefore = (await usageReportedUnits.get()).values.find((value) => value.labels.face === 'forward_auth')?.value ?? 0;
      const admitted = await decide('key-report-0001');
      assert.equal(admitted.status, 200);
      const reply = await usage('key-report-0001', JSON.stringify({ units: 450 }));
      assert.equal(reply.status, 204);
      assert.equal(reply.body, '');
      // The estimate (100) was reserved by /decide; the report charges 350 more: 1000 − 450 left.
      const tpm = await sluice.engine.peek({ tag: 't1', name: 'chat-tpm' }, { policy: 'token_bucket', capacity: 1000, refillPerSecond: 0.001 });
      assert.equal(Math.floor(tpm.remaining), 550);
      const rpm = await sluice.engine.peek({ tag: 't1', name: 'chat-rpm' }, { policy: 'token_bucket', capacity: 50, refillPerSecond: 0.001 });
      assert.equal(Math.floor(rpm.remaining), 49, 'a limit not priced by usage is not charged by a report');
      const unitsAfter = (await usageReportedUnits.get()).values.find((value) => value.labels.face === 'forward_auth')?.value ?? 0;
      assert.equal(unitsAfter - unitsBefore, 350);
    });

    it('a report past what is left is a debt: 204, and the next /decide is refused', async () => {
      assert.equal((await decide('key-report-0002')).status, 200);
      assert.equal((await usage('key-report-0002', '{"units": 1000}')).status, 204);
      assert.equal((await usage('key-report-0002', '{"units": 500}')).status, 204, 'never refused');
      const refused = await decide('key-report-0002');
      assert.equal(refused.status, 429);
      assert.equal(tpmLeft(refused), 0);
    });

    it('a usage below the estimate gives the difference back', async () => {
      assert.equal((await decide('key-report-0003')).status, 200);
      assert.equal((await usage('key-report-0003', '{"units": 10}')).status, 204);
      const tpm = await sluice.engine.peek({ tag: 't3', name: 'chat-tpm' }, { policy: 'token_bucket', capacity: 1000, refillPerSecond: 0.001 });
      assert.equal(Math.floor(tpm.remaining), 990);
    });

    it('bad input is a 400 naming the field, counted; an unknown key 401; no route 404; a large body 413', async () => {
      const before = await counted('forward_auth', 'bad_request');
      const notJson = await usage('key-report-0001', 'units=3');
      assert.equal(notJson.status, 400);
      assert.equal(JSON.parse(notJson.body).field, 'body');
      for (const body of ['{"units": -1}', '{"units": 1.5}', '{"units": "7"}', '{}', '{"units": 2000000000}']) {
        const reply = await usage('key-report-0001', body);
        assert.equal(reply.status, 400, body);
        assert.equal(JSON.parse(reply.body).field, 'units', body);
      }
      assert.equal(await counted('forward_auth', 'bad_request'), before + 6);
      assert.equal((await usage('key-unknown-9999', '{"units": 3}')).status, 401);
      const unrouted = await call(`${sluice.decisionUrl}/usage`, { method: 'POST', headers: { 'x-forwarded-method': 'GET', 'x-forwarded-uri': '/elsewhere', 'x-api-key': 'key-report-0001' }, body: '{"units": 3}' });
      assert.equal(unrouted.status, 404);
      assert.equal((await usage('key-report-0001', JSON.stringify({ units: 1, pad: 'x'.repeat(10_000) }))).status, 413);
    });
  });
});
