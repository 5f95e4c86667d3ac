// The trace export's counters, beside the other series of /metrics: spans sent
// to the collector, and spans dropped (the export queue was full, or an export
// failed or timed out). Registered whether or not tracing is on, so a dashboard
// can rely on the series; only export-queue.ts counts into them.
import { Counter, Gauge, Registry } from 'prom-client';

export const tracingRegistry = new Registry();

export const spansExported = new Counter({
  name: 'sluice_trace_spans_exported_total',
  help: 'Spans the OTLP exporter delivered to the collector',
  registers: [tracingRegistry],
});

export const spansDropped = new Counter({
  name: 'sluice_trace_spans_dropped_total',
  help: 'Spans never delivered, by reason: queue_full (the export queue was at tracing.maxQueueSize; no request waits for it), export_failed (the collector refused, was down or too slow)',
  labelNames: ['reason'] as const,
  registers: [tracingRegistry],
});
for (const reason of ['queue_full', 'export_failed'] as const) spansDropped.labels(reason).inc(0);

let queueProbe: (() => number) | undefined;

/** Where the queue's length is read when /metrics is scraped (the running tracing's queue; none when off). */
export function setQueueProbe(probe: (() => number) | undefined): void {
  queueProbe = probe;
}

new Gauge({
  name: 'sluice_trace_spans_queued',
  help: 'Finished spans waiting in the export queue',
  registers: [tracingRegistry],
  collect() {
    this.set(queueProbe?.() ?? 0);
  },
});
