// Envoy's RateLimitService over gRPC, called as Envoy calls it (a
// @grpc/grpc-js client built from the same .proto files), on real Redis:
// examples/decision/ratelimit-config.yaml's domain "shop" plus a test domain.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { protoPath as healthProto } from 'grpc-health-check';
import type { RunningSluice } from '../../src/app.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { atTopOfSecond, descriptor, EXAMPLES, type RlsClient, rlsClient, startDecisionSluice } from '../helpers/decision-service-support.js';

const TEST_DOMAIN = `
domain: test
descriptors:
  - key: k
    value: tiny
    rate_limit: { unit: minute, requests_per_unit: 3 }
  - key: k
    value: many
    rate_limit: { unit: minute, requests_per_unit: 3 }
    sluice:
      - { policy: sliding_window_log, limit: 3, windowMs: 60000 }
      - { policy: token_bucket, capacity: 2, refillPerSecond: 0.01 }
  - key: user
    value: vip*
    rate_limit: { unit: hour, requests_per_unit: 7 }
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 4 }
`;

export function yamlFor(redisUrl: string, envoyFiles: string[]): string {
  return `
routes:
  - { id: r, path: /r, upstream: 'http://127.0.0.1:9' }
store: { url: ${redisUrl}, deadlineMs: 2000 }
headers: { ietf: true }
decisionService:
  envoyConfig: [${envoyFiles.map((file) => JSON.stringify(file)).join(', ')}]
`;
}

describe('RateLimitService/ShouldRateLimit over gRPC', () => {
  let redis: RedisServer;
  let sluice: RunningSluice;
  let client: RlsClient;
  let dir: string;
  before(async () => {
    redis = await startRedis();
    dir = mkdtempSync(join(tmpdir(), 'sluice-rls-'));
    writeFileSync(join(dir, 'test.yaml'), TEST_DOMAIN);
    sluice = await startDecisionSluice(yamlFor(redis.url, [join(EXAMPLES, 'ratelimit-config.yaml'), join(dir, 'test.yaml')]));
    client = rlsClient(sluice.grpcAddress!);
  });
  after(async () => {
    client?.close();
    await sluice?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('OK until the limit, then OVER_LIMIT, with current_limit, remaining, reset and the headers', async () => {
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await client.ask({ domain: 'test', descriptors: [descriptor(['k', 'tiny'])] }));
    assert.deepEqual(answers.map((answer) => answer.overall_code), ['OK', 'OK', 'OK', 'OVER_LIMIT']);
    assert.deepEqual(answers.map((answer) => answer.statuses[0].limit_remaining ?? 0), [2, 1, 0, 0]);
    assert.deepEqual(answers[0].statuses[0].current_limit, { requests_per_unit: 3, unit: 'MINUTE' });
    assert.ok(Number(answers[3].statuses[0].duration_until_reset.seconds) >= 1);
    const headers = Object.fromEntries(answers[3].response_headers_to_add.map((header: { key: string; value: string }) => [header.key, header.value]));
    assert.equal(headers['X-RateLimit-Limit'], '3');
    assert.equal(headers['X-RateLimit-Remaining'], '0');
    assert.match(headers['Retry-After'], /^\d+$/);
    assert.match(headers['RateLimit-Policy'], /^"k";q=3;w=60$/);
    assert.match(headers.RateLimit, /^"k";r=0;t=\d+$/);
  });

  it('one status per descriptor, in order; OVER_LIMIT when any is over; unknown descriptors OK with no limit', async () => {
    const over = { domain: 'test', descriptors: [descriptor(['nope', 'x']), descriptor(['user', 'ann']), descriptor(['k', 'tiny'])] };
    const answer = await client.ask(over);
    assert.equal(answer.statuses.length, 3);
    assert.equal(answer.overall_code, 'OVER_LIMIT', 'k=tiny was used up by the test before');
    assert.deepEqual(answer.statuses.map((status: { code: string }) => status.code), ['OK', 'OK', 'OVER_LIMIT']);
    assert.equal(answer.statuses[0].current_limit, undefined);
    assert.deepEqual(answer.statuses[1].current_limit, { requests_per_unit: 4, unit: 'HOUR' });
  });

  it('an unknown domain: OK for every descriptor, no limit', async () => {
    const answer = await client.ask({ domain: 'elsewhere', descriptors: [descriptor(['k', 'tiny']), descriptor(['a', 'b'])] });
    assert.equal(answer.overall_code, 'OK');
    assert.deepEqual(answer.statuses, [{ code: 'OK' }, { code: 'OK' }]);
  });

  it('a key-only descriptor gives each value its own bucket; value prefix* beats it; exact beats both', async () => {
    const ask = (user: string) => client.ask({ domain: 'test', descriptors: [descriptor(['user', user])] });
    assert.equal((await ask('bob')).statuses[0].limit_remaining, 3);
    assert.equal((await ask('bob')).statuses[0].limit_remaining, 2);
    assert.equal((await ask('carol')).statuses[0].limit_remaining, 3, 'another value, another bucket');
    assert.equal((await ask('vip-1')).statuses[0].current_limit.requests_per_unit, 7);
  });

  it('hits_addend: 0 counts 1; the request value applies to each descriptor; a descriptor value overrides it', async () => {
    const first = await client.ask({ domain: 'test', hits_addend: 0, descriptors: [descriptor(['user', 'hits-a'])] });
    assert.equal(first.statuses[0].limit_remaining, 3);
    const second = await client.ask({ domain: 'test', hits_addend: 2, descriptors: [descriptor(['user', 'hits-b']), { ...descriptor(['user', 'hits-c']), hits_addend: { value: 3 } }] });
    assert.deepEqual(second.statuses.map((status: { limit_remaining?: number }) => status.limit_remaining ?? 0), [2, 1]);
    const tooMany = await client.ask({ domain: 'test', hits_addend: 5, descriptors: [descriptor(['user', 'hits-d'])] });
    assert.equal(tooMany.overall_code, 'OVER_LIMIT', 'more hits than the limit holds can never pass');
    const after = await client.ask({ domain: 'test', descriptors: [descriptor(['user', 'hits-d'])] });
    assert.equal(after.statuses[0].limit_remaining, 3, 'and drained nothing');
  });

  it("a descriptor's limit override is the rule it is decided by, in a bucket of its own", async () => {
    const override = { ...descriptor(['k', 'tiny']), limit: { requests_per_unit: 2, unit: 'SECOND' } };
    const answers = [];
    await atTopOfSecond(); // 2 a SECOND: three calls across a second's edge would land in two windows
    for (let i = 0; i < 3; i++) answers.push(await client.ask({ domain: 'test', descriptors: [override] }));
    assert.deepEqual(answers.map((answer) => answer.overall_code), ['OK', 'OK', 'OVER_LIMIT']);
    assert.deepEqual(answers[0].statuses[0].current_limit, { requests_per_unit: 2, unit: 'SECOND' });
  });

  it('several Sluice limits on one descriptor (the sluice: list): the tighter one governs', async () => {
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await client.ask({ domain: 'test', descriptors: [descriptor(['k', 'many'])] }));
    assert.deepEqual(answers.map((answer) => answer.overall_code), ['OK', 'OK', 'OVER_LIMIT'], 'the token bucket of 2 refuses the third');
  });

  it('nested descriptors (the example config): path /orders then remote_address, a value beating the key', async () => {
    const nested = (address: string) => client.ask({ domain: 'shop', descriptors: [descriptor(['path', '/orders'], ['remote_address', address])] });
    assert.deepEqual((await nested('10.9.9.9')).statuses[0].current_limit, { requests_per_unit: 10, unit: 'SECOND' });
    assert.deepEqual((await nested('10.0.0.1')).statuses[0].current_limit, { requests_per_unit: 100, unit: 'SECOND' });
    const partial = await client.ask({ domain: 'shop', descriptors: [descriptor(['path', '/orders'])] });
    assert.deepEqual(partial.statuses, [{ code: 'OK' }], 'the path node itself carries no limit');
  });

  it('replaces: a limit named in another matching limit’s replaces is not applied', async () => {
    const both = await client.ask({ domain: 'shop', descriptors: [descriptor(['generic_key', 'global']), descriptor(['generic_key', 'orders'])] });
    assert.equal(both.statuses[0].current_limit.name, 'global');
    assert.deepEqual(both.statuses[1], { code: 'OK' }, 'orders-path is replaced by global');
    const alone = await client.ask({ domain: 'shop', descriptors: [descriptor(['generic_key', 'orders'])] });
    assert.equal(alone.statuses[0].current_limit.name, 'orders-path');
  });

  it('shadow_mode: counted, never refused', async () => {
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await client.ask({ domain: 'shop', descriptors: [descriptor(['generic_key', 'trial'])] }));
    assert.deepEqual(answers.map((answer) => answer.overall_code), ['OK', 'OK', 'OK']);
    assert.equal(answers[2].statuses[0].limit_remaining ?? 0, 0, 'the shadow bucket is used up all the same');
  });

  it('unlimited: OK, no limit, MaxUint32 remaining, never counted', async () => {
    const answer = await client.ask({ domain: 'shop', descriptors: [descriptor(['internal', 'batch'])] });
    assert.equal(answer.overall_code, 'OK');
    assert.deepEqual(answer.statuses, [{ code: 'OK', limit_remaining: 4294967295 }]);
    assert.equal(answer.response_headers_to_add, undefined, 'no headers: nothing was decided');
  });

  it('an empty domain or no descriptors: the reference\'s own errors (UNKNOWN, its words); a bad override: INVALID_ARGUMENT naming the field', async () => {
    const cases: [unknown, grpc.status, RegExp][] = [
      [{ domain: '', descriptors: [descriptor(['a', 'b'])] }, grpc.status.UNKNOWN, /^rate limit domain must not be empty$/],
      [{ domain: 'test', descriptors: [] }, grpc.status.UNKNOWN, /^rate limit descriptor list must not be empty$/],
      [{ domain: 'test', descriptors: [{ ...descriptor(['a', 'b']), limit: { requests_per_unit: 5, unit: 'UNKNOWN' } }] }, grpc.status.INVALID_ARGUMENT, /limit\.unit/],
      [{ domain: 'test', descriptors: [{ ...descriptor(['a', 'b']), limit: { requests_per_unit: 1_000_000_001, unit: 'SECOND' } }] }, grpc.status.INVALID_ARGUMENT, /limit\.requests_per_unit: must be an integer from 0 to 1000000000/],
    ];
    for (const [request, code, details] of cases) {
      await assert.rejects(client.ask(request), (error: grpc.ServiceError) => error.code === code && details.test(error.details));
    }
  });
});

describe('grpc.health.v1 beside the RateLimitService', () => {
  it('SERVING while running, NOT_SERVING once the drain starts', async () => {
    const redis = await startRedis();
    const sluice = await startDecisionSluice(yamlFor(redis.url, [join(EXAMPLES, 'ratelimit-config.yaml')]), {}, { shutdownGraceMs: 300 });
    const loaded = grpc.loadPackageDefinition(loadSync(healthProto, { enums: String })) as unknown as { grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } } };
    const health = new loaded.grpc.health.v1.Health(sluice.grpcAddress!, grpc.credentials.createInsecure()) as grpc.Client & Record<string, (...args: unknown[]) => unknown>;
    const check = (service: string) => new Promise<string>((done, fail) => health.Check!({ service }, (error: Error | null, answer: { status: string }) => (error ? fail(error) : done(answer.status))));
    try {
      assert.equal(await check(''), 'SERVING');
      assert.equal(await check('envoy.service.ratelimit.v3.RateLimitService'), 'SERVING');
      const statuses: string[] = [];
      const watch = health.Watch!({ service: '' }) as grpc.ClientReadableStream<{ status: string }>;
      watch.on('data', (answer) => statuses.push(answer.status));
      watch.on('error', () => {});
      while (statuses.length === 0) await new Promise((done) => setTimeout(done, 20));
      const closing = sluice.close();
      while (!statuses.includes('NOT_SERVING')) await new Promise((done) => setTimeout(done, 20));
      assert.deepEqual(statuses.slice(0, 2), ['SERVING', 'NOT_SERVING']);
      watch.cancel();
      await closing;
    } finally {
      health.close();
      await sluice.close();
      await redis.stop();
    }
  });
});
