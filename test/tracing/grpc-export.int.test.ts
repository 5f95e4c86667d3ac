// OTEL_EXPORTER_OTLP_PROTOCOL=grpc: the spans reach a collector over OTLP/gRPC
// (the TraceService/Export call of a @grpc/grpc-js server of the test's own,
// its request kept as protobuf bytes).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { call } from '../helpers/gateway-support.js';
import { CLIENT_TRACE, type HeaderUpstream, headerUpstream, TRACEPARENT, tracedGateway } from './support.js';

const EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
const bytes = (value: Buffer) => value;

describe('tracing over OTLP/gRPC', () => {
  let server: grpc.Server;
  let address: string;
  let upstream: HeaderUpstream;
  const received: Buffer[] = [];
  before(async () => {
    upstream = await headerUpstream();
    server = new grpc.Server();
    const definition = { Export: { path: EXPORT, requestStream: false, responseStream: false, requestSerialize: bytes, requestDeserialize: bytes, responseSerialize: bytes, responseDeserialize: bytes } };
    server.addService(definition as unknown as grpc.ServiceDefinition, {
      Export: (exported: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
        received.push(exported.request);
        done(null, Buffer.alloc(0)); // an empty ExportTraceServiceResponse: all accepted
      },
    });
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))));
    address = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    server.forceShutdown();
    await upstream.close();
  });

  it('the request span reaches the collector over gRPC', async () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: address, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' };
    const sluice = await tracedGateway(upstream.url, '{ scheduledDelayMs: 20 }', { env, limit: 10 });
    try {
      assert.equal((await call(`${sluice.url}/orders/1`, { headers: { traceparent: TRACEPARENT } })).status, 200);
      const deadline = Date.now() + 10_000;
      const traceBytes = Buffer.from(CLIENT_TRACE, 'hex');
      // The server span ends last: it may come in a later batch than its children.
      const serverSpan = (body: Buffer) => body.includes(traceBytes) && body.includes(Buffer.from('GET /orders/:id'));
      while (!received.some(serverSpan) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.ok(received.some(serverSpan), 'the server span, with its trace id, as protobuf');
    } finally {
      await sluice.close();
    }
  });
});
