// Tracing's entry from the composition root: the settings (file and OTEL_*
// variables), then, only when tracing is on, the SDK loaded with `import()`.
// Off, this is the whole cost: no OpenTelemetry module is read, and the
// gateway's tracing stays undefined (one check per request).
import type { TracingFileConfig } from '../config/tracing-schema.js';
import { SluiceError } from '../core/errors.js';
import { type Env, tracingSettings } from './settings.js';
import type { Tracing } from './types.js';

const PACKAGES = ['@opentelemetry/api@~1.9.0', '@opentelemetry/core@~2.12.1', '@opentelemetry/context-async-hooks@~2.12.1', '@opentelemetry/resources@~2.12.1', '@opentelemetry/sdk-trace-base@~2.12.1', '@opentelemetry/semantic-conventions@^1.45.0', '@opentelemetry/exporter-trace-otlp-proto@^0.223.1', '@opentelemetry/exporter-trace-otlp-http@^0.223.1', '@opentelemetry/exporter-trace-otlp-grpc@^0.223.1'];

/** The running tracing, or undefined when it is off. A missing OpenTelemetry package is an error saying what to install. */
export async function loadTracing(file: TracingFileConfig, env: Env = process.env): Promise<Tracing | undefined> {
  const settings = tracingSettings(file, env);
  if (settings === undefined) return undefined;
  let start: typeof import('./start.js');
  try {
    start = await import('./start.js');
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_MODULE_NOT_FOUND') throw error;
    throw new SluiceError('ERR_CONFIG_INVALID', `tracing is on but the OpenTelemetry SDK is not installed (${(error as Error).message}); install it beside sluice: npm install ${PACKAGES.map((name) => `'${name}'`).join(' ')}`, 'tracing');
  }
  return start.startTracing(settings);
}
