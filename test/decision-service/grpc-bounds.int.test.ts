// One gRPC ShouldRateLimit call is bounded, through the real listener with a
// grpc-js client: its message size (refused while it arrives, before any
// decoding), its descriptors and each descriptor's entries (INVALID_ARGUMENT),
// with defaults and with decisionService's own bounds.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { RunningSluice } from '../../src/app.js';
import { descriptor, type RlsClient, rlsClient, startDecisionSluice } from '../helpers/decision-service-support.js';

const yaml = (extra = '') => `
routes:
  - { id: r, path: /r, upstream: 'http://127.0.0.1:9' }
decisionService:
  envoyConfig: ratelimit-config.yaml
${extra}`;

const many = (count: number) => Array.from({ length: count }, (_, i) => descriptor(['api_key', `k${i}`]));
const refusedWith = (code: grpc.status, details: RegExp) => (error: grpc.ServiceError) => error.code === code && details.test(error.details);

describe('bounds on one gRPC ShouldRateLimit call', () => {
  let sluice: RunningSluice;
  let tight: RunningSluice;
  let client: RlsClient;
  let tightClient: RlsClient;
  before(async () => {
    sluice = await startDecisionSluice(yaml());
    tight = await startDecisionSluice(yaml('  maxDescriptors: 2\n  maxDescriptorEntries: 1\n  grpcMaxMessageBytes: 200\n'));
    client = rlsClient(sluice.grpcAddress!);
    tightClient = rlsClient(tight.grpcAddress!);
  });
  after(async () => {
    client?.close();
    tightClient?.close();
    await Promise.allSettled([sluice?.close(), tight?.close()]);
  });

  it('defaults: 64 descriptors decided, 65 refused; 33 entries refused; 60,000 descriptors (over 1 MB) refused by size', async () => {
    const answer = await client.ask({ domain: 'shop', descriptors: many(64) });
    assert.equal(answer.statuses.length, 64);
    await assert.rejects(client.ask({ domain: 'shop', descriptors: many(65) }), refusedWith(grpc.status.INVALID_ARGUMENT, /more than 64 descriptors/));
    const wide = { entries: Array.from({ length: 33 }, (_, i) => ({ key: `k${i}`, value: 'v' })) };
    await assert.rejects(client.ask({ domain: 'shop', descriptors: [wide] }), refusedWith(grpc.status.INVALID_ARGUMENT, /descriptors\[0\]: more than 32 entries/));
    await assert.rejects(client.ask({ domain: 'shop', descriptors: many(60_000) }), refusedWith(grpc.status.RESOURCE_EXHAUSTED, /larger than 65536 bytes/));
    assert.equal((await client.ask({ domain: 'shop', descriptors: many(1) })).overall_code, 'OK', 'the listener still answers');
  });

  it('decisionService.maxDescriptors / maxDescriptorEntries / grpcMaxMessageBytes', async () => {
    assert.equal((await tightClient.ask({ domain: 'shop', descriptors: many(2) })).statuses.length, 2);
    await assert.rejects(tightClient.ask({ domain: 'shop', descriptors: many(3) }), refusedWith(grpc.status.INVALID_ARGUMENT, /more than 2 descriptors/));
    await assert.rejects(tightClient.ask({ domain: 'shop', descriptors: [descriptor(['a', 'b'], ['c', 'd'])] }), refusedWith(grpc.status.INVALID_ARGUMENT, /more than 1 entries/));
    await assert.rejects(tightClient.ask({ domain: 'shop', descriptors: [descriptor(['api_key', 'x'.repeat(300)])] }), refusedWith(grpc.status.RESOURCE_EXHAUSTED, /larger than 200 bytes/));
  });
});
