// tracing/settings.ts: the file's `tracing:` section with the OTEL_* variables
// over it, as the OpenTelemetry specification names and reads them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/decision-service/load-config.js';
import { TRACING_DEFAULTS } from '../../src/config/tracing-schema.js';
import { tracingSettings } from '../../src/tracing/settings.js';

const on = { ...TRACING_DEFAULTS, enabled: true };

describe('tracing settings', () => {
  it('off by default; on with the file or either endpoint variable; OTEL_SDK_DISABLED wins', () => {
    assert.equal(tracingSettings(TRACING_DEFAULTS, {}), undefined);
    assert.ok(tracingSettings(on, {}));
    assert.ok(tracingSettings(TRACING_DEFAULTS, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }));
    assert.ok(tracingSettings(TRACING_DEFAULTS, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }));
    assert.equal(tracingSettings(on, { OTEL_SDK_DISABLED: 'TRUE', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }), undefined);
    assert.ok(tracingSettings(on, { OTEL_SDK_DISABLED: 'false' }));
  });

  it('the defaults: http/protobuf to localhost:4318/v1/traces, parentbased_always_on, service sluice', () => {
    const settings = tracingSettings(on, {})!;
    assert.equal(settings.protocol, 'http/protobuf');
    assert.equal(settings.url, 'http://localhost:4318/v1/traces');
    assert.equal(settings.sampler, 'parentbased_always_on');
    assert.equal(settings.ratio, 1);
    assert.equal(settings.serviceName, 'sluice');
    assert.equal(tracingSettings({ ...on, protocol: 'grpc' }, {})!.url, 'http://localhost:4317');
  });

  it('a base endpoint gets /v1/traces over HTTP; the traces endpoint is used as it is; grpc takes the address', () => {
    assert.equal(tracingSettings(on, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })!.url, 'http://c:4318/v1/traces');
    assert.equal(tracingSettings(on, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/x' })!.url, 'http://t:9/x');
    assert.equal(tracingSettings(on, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })!.url, 'http://c:4317');
    assert.equal(tracingSettings({ ...on, endpoint: 'https://file:4318' }, {})!.url, 'https://file:4318/v1/traces');
  });

  it('the variables override the file', () => {
    const settings = tracingSettings({ ...on, serviceName: 'file', sampler: 'always_on', samplerArg: 0.5 }, { OTEL_SERVICE_NAME: 'edge', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01', OTEL_BSP_MAX_QUEUE_SIZE: '64' })!;
    assert.deepEqual([settings.serviceName, settings.sampler, settings.ratio, settings.maxQueueSize], ['edge', 'parentbased_traceidratio', 0.01, 64]);
  });

  it('a bad variable is an error naming it', () => {
    assert.throws(() => tracingSettings(on, { OTEL_TRACES_SAMPLER: 'sometimes' }), /OTEL_TRACES_SAMPLER: must be one of always_on/);
    assert.throws(() => tracingSettings(on, { OTEL_TRACES_SAMPLER_ARG: '2' }), /OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1/);
    assert.throws(() => tracingSettings(on, { OTEL_EXPORTER_OTLP_PROTOCOL: 'carrier-pigeon' }), /OTEL_EXPORTER_OTLP_PROTOCOL: must be one of/);
    assert.throws(() => tracingSettings(TRACING_DEFAULTS, { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }), /OTEL_EXPORTER_OTLP_ENDPOINT: must be an http/);
  });

  it('the file: off when absent, a bad field named with its line', () => {
    const routes = 'routes:\n  - id: a\n    path: /a\n    upstream: http://127.0.0.1:1\n';
    assert.deepEqual(parseConfig(routes, { source: 't.yaml', env: {} }).tracing, TRACING_DEFAULTS);
    assert.throws(() => parseConfig(`${routes}tracing:\n  enabled: true\n  sampler: sometimes\n`, { source: 't.yaml', env: {} }), /t\.yaml:7: tracing\.sampler: must be one of always_on/);
    assert.throws(() => parseConfig(`${routes}tracing:\n  samplerArg: 3\n`, { source: 't.yaml', env: {} }), /tracing\.samplerArg: must be from 0 to 1/);
    assert.throws(() => parseConfig(`${routes}admin:\n  metrics:\n    listen: nowhere\n`, { source: 't.yaml', env: {} }), /admin\.metrics\.listen: must be host:port/);
  });
});
