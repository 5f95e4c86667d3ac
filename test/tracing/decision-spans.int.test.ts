// The decision service's spans: a ShouldRateLimit over gRPC (its parent from
// the traceparent metadata Envoy sends) and a forward-auth /decide, each with
// the limit decision as its child.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import type { RunningSluice } from '../../src/app.js';
import { loadRls } from '../../src/decision-service/proto-files.js';
import { descriptor, exampleSluiceYaml, startDecisionSluice } from '../helpers/decision-service-support.js';
import { call } from '../helpers/gateway-support.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js';

const newTrace = () => randomUUID().replaceAll('-', '');
const PARENT = 'b7ad6b7169203331';

describe('tracing: the decision service', () => {
  let receiver: OtlpReceiver;
  let sluice: RunningSluice;
  before(async () => {
    receiver = await startOtlpReceiver();
    const yaml = `${exampleSluiceYaml()}\ntracing: { enabled: true, protocol: http/json, endpoint: "${receiver.url}", scheduledDelayMs: 20 }\n`;
    sluice = await startDecisionSluice(yaml, {}, { env: {} });
  });
  after(async () => {
    await sluice.close();
    await receiver.close();
  });

  it('ShouldRateLimit: a SERVER span under the caller, with its gRPC status, the decision its child', async () => {
    const { Client } = loadRls();
    const client = new Client(sluice.grpcAddress!, grpc.credentials.createInsecure()) as grpc.Client & Record<string, (request: unknown, metadata: grpc.Metadata, done: (error: grpc.ServiceError | null, answer: { overall_code: string }) => void) => void>;
    const traceId = newTrace();
    const metadata = new grpc.Metadata();
    metadata.set('traceparent', `00-${traceId}-${PARENT}-01`);
    try {
      const answer = await new Promise<{ overall_code: string }>((resolve, reject) =>
        client.ShouldRateLimit!({ domain: 'shop', descriptors: [descriptor(['api_key', 'k1'])] }, metadata, (error, reply) => (error ? reject(error) : resolve(reply))),
      );
      assert.equal(answer.overall_code, 'OK');
    } finally {
      client.close();
    }
    const spans = await receiver.waitFor(2, (span) => span.traceId === traceId);
    const rpc = spans.find((span) => span.name === 'ShouldRateLimit')!;
    assert.equal(rpc.parentSpanId, PARENT);
    assert.equal(rpc.kind, 2);
    assert.equal(rpc.attributes['rpc.system'], 'grpc');
    assert.equal(rpc.attributes['rpc.method'], 'ShouldRateLimit');
    assert.equal(rpc.attributes['rpc.grpc.status_code'], 0);
    const limits = spans.find((span) => span.name === 'sluice.limits')!;
    assert.equal(limits.parentSpanId, rpc.spanId);
    assert.deepEqual(limits.attributes['sluice.limit.outcomes'], ['allowed']);
  });

  it('/decide: a SERVER span with the answer status, the decision its child', async () => {
    const traceId = newTrace();
    const headers = { traceparent: `00-${traceId}-${PARENT}-01`, 'x-original-method': 'POST', 'x-original-uri': '/orders', 'x-api-key': 'shop-a-demo-key' };
    assert.equal((await call(`${sluice.decisionUrl}/decide`, { headers })).status, 200);
    const spans = await receiver.waitFor(2, (span) => span.traceId === traceId);
    const decide = spans.find((span) => span.kind === 2)!;
    assert.equal(decide.name, 'GET /decide');
    assert.equal(decide.parentSpanId, PARENT);
    assert.equal(decide.attributes['http.response.status_code'], 200);
    const limits = spans.find((span) => span.name === 'sluice.limits')!;
    assert.equal(limits.parentSpanId, decide.spanId);
    assert.deepEqual(limits.attributes['sluice.limit.ids'], ['create-order']);
  });
});
