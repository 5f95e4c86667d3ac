// Starts the OpenTelemetry SDK for Node as tracing/settings.ts says: the
// provider with its sampler, the W3C trace-context and baggage propagators, the
// async-hooks context (a request's span follows its awaits), and a bounded
// batch export over OTLP (HTTP/protobuf, HTTP/JSON or gRPC). Loaded with
// `import()` only when tracing is on: with it off no OpenTelemetry module is read.
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, type Sampler, type SpanExporter, TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { BoundedProcessor, CountingExporter } from './export-queue.js';
import type { TracingSettings } from './settings.js';
import { SdkTracing } from './sdk-tracing.js';
import type { Tracing } from './types.js';

const VERSION = '0.1.0';

/** The SDK running with `settings`, registered as the process's tracer provider. */
export async function startTracing(settings: TracingSettings): Promise<Tracing> {
  const exporter = new CountingExporter(await exporterFor(settings));
  const batch = new BatchSpanProcessor(exporter, {
    maxQueueSize: settings.maxQueueSize,
    maxExportBatchSize: Math.min(settings.maxExportBatchSize, settings.maxQueueSize),
    scheduledDelayMillis: settings.scheduledDelayMs,
    exportTimeoutMillis: settings.exportTimeoutMs,
  });
  const processor = new BoundedProcessor(batch, exporter, settings.maxQueueSize);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, 'service.version': VERSION }),
    sampler: samplerFor(settings),
    spanProcessors: [processor],
  });
  // The tracer and the propagator stay this instance's own (no global provider to fight over); only the
  // context manager is the process's, so that a span stays active across a request's awaits.
  const manager = new AsyncLocalStorageContextManager().enable();
  const registered = context.setGlobalContextManager(manager);
  const propagator = new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] });
  return new SdkTracing({
    tracer: provider.getTracer('sluice', VERSION),
    propagator,
    processor,
    shutdown: async () => {
      // What is queued gets one last export; a collector that does not answer holds the stop for one export timeout at most.
      let timer: NodeJS.Timeout | undefined;
      const given = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, settings.exportTimeoutMs);
      });
      await Promise.race([provider.shutdown().catch(() => undefined), given]);
      clearTimeout(timer);
      if (registered) context.disable();
    },
  });
}

/** OTEL_TRACES_SAMPLER's names, built as the SDK's own environment reader builds them. */
export function samplerFor({ sampler, ratio }: Pick<TracingSettings, 'sampler' | 'ratio'>): Sampler {
  switch (sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** The OTLP exporter of the protocol; each package loaded only when it is the one asked for. */
async function exporterFor({ protocol, url, exportTimeoutMs }: TracingSettings): Promise<SpanExporter> {
  const options = { url, timeoutMillis: exportTimeoutMs };
  if (protocol === 'grpc') return new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter(options);
  if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(options);
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(options);
}
