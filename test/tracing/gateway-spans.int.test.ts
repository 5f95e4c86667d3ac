// The gateway's spans as a collector receives them (OTLP/JSON, the test's own
// receiver): an allowed and a refused request, each with its limit decision
// and (allowed) its upstream call, and the traceparent the upstream sees.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { call } from '../helpers/gateway-support.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { CLIENT_SPAN, CLIENT_TRACE, type HeaderUpstream, headerUpstream, parseTraceparent, TRACEPARENT, tracedGateway } from './support.js';

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;
const ERROR = 2;

describe('tracing: the gateway request, its limit decision and its upstream call', () => {
  let receiver: OtlpReceiver;
  let upstream: HeaderUpstream;
  let sluice: RunningSluice;
  let spans: ReceivedSpan[];
  let allowedStatus: number;
  let refusedStatus: number;

  before(async () => {
    receiver = await startOtlpReceiver();
    upstream = await headerUpstream();
    sluice = await tracedGateway(upstream.url, `{ enabled: true, protocol: http/json, endpoint: "${receiver.url}", scheduledDelayMs: 20, serviceName: edge }`);
    allowedStatus = (await call(`${sluice.url}/orders/7?key=secret`, { headers: { traceparent: TRACEPARENT, tracestate: 'vendor=1', baggage: 'team=payments' } })).status;
    refusedStatus = (await call(`${sluice.url}/orders/8`)).status;
    spans = await receiver.waitFor(5);
  });
  after(async () => {
    await sluice.close();
    await upstream.close();
    await receiver.close();
  });

  const ofTrace = (traceId: string) => spans.filter((span) => span.traceId === traceId);

  it('the allowed request continues the client trace: server span, limits and upstream as its children', () => {
    assert.equal(allowedStatus, 200);
    const trace = ofTrace(CLIENT_TRACE);
    const server = trace.find((span) => span.kind === SERVER)!;
    assert.equal(server.parentSpanId, CLIENT_SPAN, "the client's span is the parent");
    assert.equal(server.name, 'GET /orders/:id');
    assert.equal(server.service, 'edge');
    assert.deepEqual(
      { ...server.attributes, 'server.port': undefined },
      { 'http.request.method': 'GET', 'url.path': '/orders/7', 'url.scheme': 'http', 'network.protocol.version': '1.1', 'server.address': '127.0.0.1', 'server.port': undefined, 'http.route': '/orders/:id', 'sluice.route': 'orders', 'http.response.status_code': 200 },
      'no query string (it may hold a key)',
    );
    assert.notEqual(server.status.code, ERROR);
    const limits = trace.find((span) => span.name === 'sluice.limits')!;
    assert.equal(limits.kind, INTERNAL);
    assert.equal(limits.parentSpanId, server.spanId);
    assert.deepEqual(limits.attributes['sluice.limit.ids'], ['per-route']);
    assert.deepEqual(limits.attributes['sluice.limit.policies'], ['fixed_window']);
    assert.deepEqual(limits.attributes['sluice.limit.outcomes'], ['allowed']);
    assert.deepEqual(limits.attributes['sluice.limit.sources'], ['memory']);
    assert.match(String((limits.attributes['sluice.limit.keys'] as string[])[0]), /^~h\.[0-9a-f]{32}$/, 'bucket keys only hashed');
    assert.equal(limits.attributes['sluice.decision.allowed'], true);
    const upstreamSpan = trace.find((span) => span.kind === CLIENT)!;
    assert.equal(upstreamSpan.parentSpanId, server.spanId);
    assert.equal(upstreamSpan.attributes['http.response.status_code'], 200);
    assert.equal(upstreamSpan.attributes['sluice.upstream.outcome'], 'ok');
  });

  it("the upstream gets the upstream span as traceparent's parent, the client's tracestate and baggage", () => {
    assert.equal(upstream.seen.length, 1, 'the refused request never reached it');
    const seen = upstream.seen[0]!;
    const parent = parseTraceparent(seen.traceparent);
    const upstreamSpan = ofTrace(CLIENT_TRACE).find((span) => span.kind === CLIENT)!;
    assert.deepEqual(parent, { traceId: CLIENT_TRACE, spanId: upstreamSpan.spanId, flags: '01' });
    assert.notEqual(parent.spanId, CLIENT_SPAN, "the client's traceparent is replaced, not forwarded as it came");
    assert.equal(seen.tracestate, 'vendor=1');
    assert.equal(seen.baggage, 'team=payments');
  });

  it('the refused request starts a trace of its own: a 429 server span (not an error) and a refusing decision, no upstream call', () => {
    assert.equal(refusedStatus, 429);
    const server = spans.find((span) => span.kind === SERVER && span.attributes['http.response.status_code'] === 429)!;
    assert.notEqual(server.traceId, CLIENT_TRACE);
    assert.equal(server.parentSpanId, undefined, 'a root span: the request brought no traceparent');
    assert.notEqual(server.status.code, ERROR, "a 4xx is the client's, not the server's error");
    const trace = ofTrace(server.traceId);
    assert.deepEqual(trace.map((span) => span.name).sort(), ['GET /orders/:id', 'sluice.limits']);
    const limits = trace.find((span) => span.name === 'sluice.limits')!;
    assert.equal(limits.parentSpanId, server.spanId);
    assert.deepEqual(limits.attributes['sluice.limit.outcomes'], ['refused']);
    assert.equal(limits.attributes['sluice.decision.allowed'], false);
    assert.equal(limits.attributes['sluice.decision.governing'], 'per-route');
  });
});
