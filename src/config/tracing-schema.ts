// The `tracing:` section: OpenTelemetry traces of the gateway and the decision
// service (docs/observability.md). Each OTEL_* variable overrides its field at
// start (tracing/settings.ts), so a deployment configured the standard way needs no file edit.
import { z } from 'zod';

const positiveInt = (max: number) => z.number().int('must be an integer').min(1, 'must be at least 1').max(max, `must be at most ${max}`);

export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const;

export const tracingSchema = z
  .object({
    enabled: z.boolean().default(false).describe('Export traces (off by default). Also on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; OTEL_SDK_DISABLED=true turns it off whatever this says.'),
    endpoint: z.string().regex(/^https?:\/\/\S+$/, 'must be an http:// or https:// URL').optional().describe('The OTLP collector: its base URL (http/protobuf and http/json send to <endpoint>/v1/traces; grpc to the address). OTEL_EXPORTER_OTLP_ENDPOINT; default http://localhost:4318 (grpc: http://localhost:4317).'),
    protocol: z.enum(OTLP_PROTOCOLS, `must be one of ${OTLP_PROTOCOLS.join(', ')}`).default('http/protobuf').describe('OTLP transport: http/protobuf (the default), http/json or grpc. OTEL_EXPORTER_OTLP_PROTOCOL / OTEL_EXPORTER_OTLP_TRACES_PROTOCOL.'),
    serviceName: z.string().min(1, 'must not be empty').default('sluice').describe('service.name of every span. OTEL_SERVICE_NAME.'),
    sampler: z.enum(TRACE_SAMPLERS, `must be one of ${TRACE_SAMPLERS.join(', ')}`).default('parentbased_always_on').describe('Which traces are recorded. OTEL_TRACES_SAMPLER. The traceparent is passed upstream whatever is sampled.'),
    samplerArg: z.number().min(0, 'must be from 0 to 1').max(1, 'must be from 0 to 1').optional().describe('The ratio of the *traceidratio samplers, 0 to 1 (default 1). OTEL_TRACES_SAMPLER_ARG.'),
    maxQueueSize: positiveInt(1_000_000).default(2048).describe('Finished spans held for export; past it new spans are dropped and counted (sluice_trace_spans_dropped_total), never waited for. OTEL_BSP_MAX_QUEUE_SIZE.'),
    maxExportBatchSize: positiveInt(1_000_000).default(512).describe('Spans sent in one export request. OTEL_BSP_MAX_EXPORT_BATCH_SIZE.'),
    scheduledDelayMs: positiveInt(600_000).default(1000).describe('Longest a finished span waits before its batch is sent. OTEL_BSP_SCHEDULE_DELAY.'),
    exportTimeoutMs: positiveInt(600_000).default(10_000).describe('Longest one export request may take before it is given up (its spans counted as dropped). OTEL_EXPORTER_OTLP_TIMEOUT.'),
  })
  .strict()
  .describe('OpenTelemetry traces of the gateway and the decision service (docs/observability.md).');

export type TracingFileConfig = z.output<typeof tracingSchema>;

export const TRACING_DEFAULTS: TracingFileConfig = tracingSchema.parse({});
