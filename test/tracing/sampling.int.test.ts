// What is exported, and what is passed upstream, as the sampler and the
// switches say: ratio 0 exports nothing yet still passes a traceparent
// (unsampled) upstream; tracing off (the default) and OTEL_SDK_DISABLED export
// nothing and forward the client's traceparent untouched; the default
// protocol is OTLP over HTTP/protobuf.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { call } from '../helpers/gateway-support.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { CLIENT_SPAN, CLIENT_TRACE, type HeaderUpstream, headerUpstream, parseTraceparent, TRACEPARENT, tracedGateway } from './support.js';

/** Long enough for several export rounds at scheduledDelayMs 20. */
const QUIET_MS = 300;

describe('tracing: sampler, switches and protocol', () => {
  let receiver: OtlpReceiver;
  let upstream: HeaderUpstream;
  before(async () => {
    receiver = await startOtlpReceiver();
    upstream = await headerUpstream();
  });
  after(async () => {
    await upstream.close();
    await receiver.close();
  });

  it('OTEL_TRACES_SAMPLER=traceidratio with arg 0: nothing exported, an unsampled traceparent still goes upstream', async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' };
    const sluice = await tracedGateway(upstream.url, '{ scheduledDelayMs: 20 }', { env, limit: 10 });
    try {
      const before = upstream.seen.length;
      assert.equal((await call(`${sluice.url}/orders/1`)).status, 200);
      await sleep(QUIET_MS);
      const parent = parseTraceparent(upstream.seen[before]!.traceparent);
      assert.equal(parent.flags, '00', 'not sampled');
      assert.equal(receiver.requests, 0, 'nothing exported');
    } finally {
      await sluice.close();
    }
  });

  it('parentbased_traceidratio 0 follows a sampled parent: the client decided, the trace is exported', async () => {
    const sluice = await tracedGateway(upstream.url, `{ enabled: true, protocol: http/json, endpoint: "${receiver.url}", sampler: parentbased_traceidratio, samplerArg: 0, scheduledDelayMs: 20 }`, { limit: 10 });
    try {
      await call(`${sluice.url}/orders/1`, { headers: { traceparent: TRACEPARENT } });
      const spans = await receiver.waitFor(1, (span) => span.traceId === CLIENT_TRACE);
      assert.ok(spans.length >= 1);
    } finally {
      await sluice.close();
    }
  });

  it('off by default: nothing exported, the client traceparent forwarded as it came', async () => {
    const sluice = await tracedGateway(upstream.url, `{ endpoint: "${receiver.url}", scheduledDelayMs: 20 }`, { limit: 10 });
    try {
      const count = receiver.requests;
      const before = upstream.seen.length;
      await call(`${sluice.url}/orders/1`, { headers: { traceparent: TRACEPARENT } });
      await call(`${sluice.url}/orders/2`);
      await sleep(QUIET_MS);
      assert.equal(upstream.seen[before]!.traceparent, TRACEPARENT);
      assert.equal(upstream.seen[before + 1]!.traceparent, undefined, 'no trace is started');
      assert.equal(receiver.requests, count);
    } finally {
      await sluice.close();
    }
  });

  it('OTEL_SDK_DISABLED=true turns off what the file and the endpoint variable turn on', async () => {
    const env = { OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url };
    const sluice = await tracedGateway(upstream.url, `{ enabled: true, protocol: http/json, endpoint: "${receiver.url}", scheduledDelayMs: 20 }`, { env, limit: 10 });
    try {
      const count = receiver.requests;
      const before = upstream.seen.length;
      await call(`${sluice.url}/orders/1`, { headers: { traceparent: TRACEPARENT } });
      await sleep(QUIET_MS);
      assert.equal(upstream.seen[before]!.traceparent, TRACEPARENT);
      assert.equal(receiver.requests, count);
    } finally {
      await sluice.close();
    }
  });

  it('the default protocol is http/protobuf, sent to <endpoint>/v1/traces', async () => {
    const sluice = await tracedGateway(upstream.url, '{ scheduledDelayMs: 20 }', { env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url }, limit: 10 });
    try {
      const count = receiver.bodies.length;
      await call(`${sluice.url}/orders/1`, { headers: { traceparent: TRACEPARENT } });
      // The server span (whose parent is the client's span) ends last: it may come in a later batch than its children.
      const serverSpan = ({ body }: { body: Buffer }) => body.includes(Buffer.from(CLIENT_TRACE, 'hex')) && body.includes(Buffer.from(CLIENT_SPAN, 'hex'));
      const deadline = Date.now() + 10_000;
      while (!receiver.bodies.slice(count).some(serverSpan) && Date.now() < deadline) await sleep(20);
      const sent = receiver.bodies.slice(count);
      assert.ok(sent.length > 0);
      for (const body of sent) assert.equal(body.type, 'application/x-protobuf');
      assert.ok(receiver.paths.slice(-sent.length).every((path) => path === '/v1/traces'));
      assert.ok(sent.some(serverSpan), 'the trace id and the client span as the parent, as protobuf bytes');
    } finally {
      await sluice.close();
    }
  });
});
