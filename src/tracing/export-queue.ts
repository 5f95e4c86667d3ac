// The bounded export queue's accounting. The SDK's BatchSpanProcessor already
// holds at most maxQueueSize spans and drops the rest, but counts them only in
// a log line: here the same bound is kept one step before it, so every span
// dropped is counted in /metrics, and the exporter's results are counted too.
// Nothing here waits: a span that does not fit is dropped at once.
import type { Context } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { spansDropped, spansExported } from '../metrics/trace-export.js';

const SAMPLED = 1;

/** The exporter, counting what each export delivered or lost, and telling the queue what left it. */
export class CountingExporter implements SpanExporter {
  /** Spans handed to the exporter: they have left the batch processor's queue. */
  taken = 0;

  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.taken += spans.length;
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) spansExported.inc(spans.length);
      else spansDropped.labels('export_failed').inc(spans.length);
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** Passes sampled spans to the batch processor while its queue has room; counts the ones it would drop. */
export class BoundedProcessor implements SpanProcessor {
  private given = 0;

  constructor(
    private readonly batch: SpanProcessor,
    private readonly exporter: CountingExporter,
    private readonly maxQueueSize: number,
  ) {}

  /** Spans waiting in the batch processor's queue now. */
  queued(): number {
    return this.given - this.exporter.taken;
  }

  onStart(span: Span, parent: Context): void {
    this.batch.onStart(span, parent);
  }

  onEnd(span: ReadableSpan): void {
    if ((span.spanContext().traceFlags & SAMPLED) === 0) return;
    const queued = this.queued();
    if (queued >= this.maxQueueSize) {
      spansDropped.labels('queue_full').inc();
      return;
    }
    this.given++;
    this.batch.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.batch.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.batch.shutdown();
  }
}
