// A WebSocket upgrade through a traced gateway: the upstream's handshake
// carries a traceparent of the client's trace whose parent is the gateway's
// request span, not the client's traceparent as it came.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import type { RunningSluice } from '../../src/app.js';
import { type EchoUpstream, startEcho } from '../helpers/ws-echo.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { CLIENT_SPAN, CLIENT_TRACE, parseTraceparent, TRACEPARENT, tracedGateway } from './support.js';

describe('tracing: a WebSocket tunnel', () => {
  let receiver: OtlpReceiver;
  let upstream: EchoUpstream;
  let sluice: RunningSluice;
  before(async () => {
    receiver = await startOtlpReceiver();
    upstream = await startEcho();
    sluice = await tracedGateway(upstream.url, `{ enabled: true, protocol: http/json, endpoint: "${receiver.url}", scheduledDelayMs: 20 }`, { limit: 10 });
  });
  after(async () => {
    await sluice.close();
    await upstream.close();
    await receiver.close();
  });

  it("the handshake upstream has the request span as the traceparent's parent", async () => {
    const ws = new WebSocket(`${sluice.url.replace('http', 'ws')}/orders/1`, { headers: { traceparent: TRACEPARENT } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.close();
    const sent = parseTraceparent(upstream.upgrades.at(-1)!.headers.traceparent);
    assert.equal(sent.traceId, CLIENT_TRACE);
    assert.notEqual(sent.spanId, CLIENT_SPAN);
    const server = (await receiver.waitFor(1, (span) => span.traceId === CLIENT_TRACE && span.kind === 2))[0]!;
    assert.equal(sent.spanId, server.spanId);
  });
});
