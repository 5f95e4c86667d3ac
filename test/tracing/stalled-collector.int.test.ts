// A collector that accepts and never answers slows no request: the spans
// wait in a bounded queue, the ones past it are dropped at once and counted
// (sluice_trace_spans_dropped_total), and stopping waits one export timeout at most.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { spansDropped } from '../../src/metrics/trace-export.js';
import { call } from '../helpers/gateway-support.js';
import { type OtlpReceiver, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { type HeaderUpstream, headerUpstream, tracedGateway } from './support.js';

const REQUESTS = 60;
const EXPORT_TIMEOUT_MS = 3_000;

async function droppedFullQueue(): Promise<number> {
  const metric = await spansDropped.get();
  return metric.values.find((value) => value.labels.reason === 'queue_full')?.value ?? 0;
}

describe('tracing: a stalled collector', () => {
  let receiver: OtlpReceiver;
  let upstream: HeaderUpstream;
  let sluice: RunningSluice;
  before(async () => {
    receiver = await startOtlpReceiver({ stall: true });
    upstream = await headerUpstream();
    const tracing = `{ enabled: true, protocol: http/json, endpoint: "${receiver.url}", scheduledDelayMs: 10, maxQueueSize: 8, maxExportBatchSize: 4, exportTimeoutMs: ${EXPORT_TIMEOUT_MS} }`;
    sluice = await tracedGateway(upstream.url, tracing, { limit: 1_000 });
  });
  after(async () => {
    await upstream.close();
    await receiver.close();
  });

  it('requests take no longer than the collector lets them: they never wait for it, and the drops are counted', async () => {
    const droppedBefore = await droppedFullQueue();
    const times: number[] = [];
    const began = performance.now();
    for (let i = 0; i < REQUESTS; i++) {
      const started = performance.now();
      assert.equal((await call(`${sluice.url}/orders/${i}`)).status, 200);
      times.push(performance.now() - started);
    }
    const elapsed = performance.now() - began;
    times.sort((a, b) => a - b);
    assert.ok(receiver.requests >= 1, 'the exporter reached the collector, which held its request');
    // Bounded by far less than one export timeout: no request waited for the stalled export.
    assert.ok(times.at(-1)! < EXPORT_TIMEOUT_MS / 3, `slowest request ${times.at(-1)!.toFixed(1)} ms`);
    const dropped = (await droppedFullQueue()) - droppedBefore;
    // Three spans a request; at most 8 queued, and one batch of 4 taken per export timeout (each export stalls until it): the rest were dropped.
    const taken = 4 * (1 + Math.ceil(elapsed / EXPORT_TIMEOUT_MS));
    assert.ok(dropped >= REQUESTS * 3 - 8 - taken, `dropped ${dropped} of ${REQUESTS * 3} in ${elapsed.toFixed(0)} ms`);
  });

  it('close() waits one export timeout at most for the stalled collector', async () => {
    const started = performance.now();
    await sluice.close();
    assert.ok(performance.now() - started < EXPORT_TIMEOUT_MS + 2_500, `closed after ${(performance.now() - started).toFixed(0)} ms`);
  });
});
