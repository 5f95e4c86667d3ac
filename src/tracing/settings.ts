// What tracing runs with: the config file's `tracing:` section with the
// standard OTEL_* variables laid over it, as every OpenTelemetry SDK reads
// them. Pure: the variables come in as a record, so a test names them.
import { SluiceError } from '../core/errors.js';
import { OTLP_PROTOCOLS, TRACE_SAMPLERS, type TracingFileConfig } from '../config/tracing-schema.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface TracingSettings {
  readonly serviceName: string;
  readonly protocol: (typeof OTLP_PROTOCOLS)[number];
  /** The traces URL itself: `<endpoint>/v1/traces` over HTTP, the collector's address over gRPC. */
  readonly url: string;
  readonly sampler: (typeof TRACE_SAMPLERS)[number];
  readonly ratio: number;
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
  readonly scheduledDelayMs: number;
  readonly exportTimeoutMs: number;
}

const set = (value: string | undefined): value is string => value !== undefined && value.trim() !== '';

/** Undefined when tracing is off: not asked for, or OTEL_SDK_DISABLED=true. A bad variable is an error naming it. */
export function tracingSettings(file: TracingFileConfig, env: Env): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const baseEndpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!file.enabled && !set(tracesEndpoint) && !set(baseEndpoint)) return undefined;
  const protocol = oneOf(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL, OTLP_PROTOCOLS, 'OTEL_EXPORTER_OTLP_PROTOCOL') ?? file.protocol;
  const sampler = oneOf(env.OTEL_TRACES_SAMPLER, TRACE_SAMPLERS, 'OTEL_TRACES_SAMPLER') ?? file.sampler;
  return {
    serviceName: set(env.OTEL_SERVICE_NAME) ? env.OTEL_SERVICE_NAME.trim() : file.serviceName,
    protocol,
    url: tracesUrl({ protocol, tracesEndpoint, baseEndpoint, fileEndpoint: file.endpoint }),
    sampler,
    ratio: number(env.OTEL_TRACES_SAMPLER_ARG, 'OTEL_TRACES_SAMPLER_ARG', 0, 1) ?? file.samplerArg ?? 1,
    maxQueueSize: number(env.OTEL_BSP_MAX_QUEUE_SIZE, 'OTEL_BSP_MAX_QUEUE_SIZE', 1) ?? file.maxQueueSize,
    maxExportBatchSize: number(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 1) ?? file.maxExportBatchSize,
    scheduledDelayMs: number(env.OTEL_BSP_SCHEDULE_DELAY, 'OTEL_BSP_SCHEDULE_DELAY', 1) ?? file.scheduledDelayMs,
    exportTimeoutMs: number(env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT, 'OTEL_EXPORTER_OTLP_TIMEOUT', 1) ?? file.exportTimeoutMs,
  };
}

interface Endpoints {
  protocol: TracingSettings['protocol'];
  tracesEndpoint: string | undefined;
  baseEndpoint: string | undefined;
  fileEndpoint: string | undefined;
}

/** The signal-specific variable is used as it is; a base endpoint gets `/v1/traces` over HTTP (the specification's rule). */
function tracesUrl({ protocol, tracesEndpoint, baseEndpoint, fileEndpoint }: Endpoints): string {
  if (set(tracesEndpoint)) return checkedUrl(tracesEndpoint.trim(), 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = set(baseEndpoint) ? checkedUrl(baseEndpoint.trim(), 'OTEL_EXPORTER_OTLP_ENDPOINT') : (fileEndpoint ?? (protocol === 'grpc' ? 'http://localhost:4317' : 'http://localhost:4318'));
  if (protocol === 'grpc') return base;
  return `${base.replace(/\/+$/, '')}/v1/traces`;
}

function checkedUrl(value: string, variable: string): string {
  if (/^https?:\/\/\S+$/.test(value)) return value;
  throw new SluiceError('ERR_CONFIG_INVALID', `must be an http:// or https:// URL`, variable);
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], variable: string): T | undefined {
  if (!set(value)) return undefined;
  const wanted = value.trim().toLowerCase();
  if ((allowed as readonly string[]).includes(wanted)) return wanted as T;
  throw new SluiceError('ERR_CONFIG_INVALID', `must be one of ${allowed.join(', ')}`, variable);
}

function number(value: string | undefined, variable: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (!set(value)) return undefined;
  const parsed = Number(value.trim());
  if (Number.isFinite(parsed) && parsed >= min && parsed <= max) return parsed;
  throw new SluiceError('ERR_CONFIG_INVALID', `must be a number from ${min} to ${max}`, variable);
}
