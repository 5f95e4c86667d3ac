// A gRPC server answering every ShouldRateLimit with one fixed OK, no decision:
// the cost of the gRPC stack alone. `stack`: `sluice` (the decision service's
// own node:http2 face and protobufjs codec) or `grpc-js` (@grpc/grpc-js's
// server with @grpc/proto-loader, what the face used before).
import { createServer, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { decodeRequest } from '../../../src/decision-service/grpc-codec.js';
import { answerFrame, isGrpc, readMessage } from '../../../src/decision-service/grpc-wire.js';
import { loadRls } from '../../../src/decision-service/proto-files.js';
import type { RlsResponse } from '../../../src/decision-service/rls.js';
import { responseFrame } from '../../../src/decision-service/rls-response-frame.js';
import { args, type Served, serve } from './serve.js';

const FIXED: RlsResponse = { overall_code: 'OK', statuses: [{ code: 'OK', limit_remaining: 5 }], response_headers_to_add: [] };

function sluiceStack(): Promise<Served> {
  const server = createServer();
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    if (!isGrpc(stream, headers)) return;
    readMessage(stream).then((message) => {
      decodeRequest(message);
      answerFrame(stream, responseFrame(FIXED));
    }, () => stream.close());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ url: `127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((done) => server.close(() => done())) })),
  );
}

function grpcJsStack(): Promise<Served> {
  const server = new grpc.Server();
  server.addService(loadRls().service, { ShouldRateLimit: (_call: unknown, done: grpc.sendUnaryData<RlsResponse>) => done(null, FIXED) });
  return new Promise((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => (error ? reject(error) : resolve({ url: `127.0.0.1:${port}`, close: async () => server.forceShutdown() }))),
  );
}

const { stack } = args<{ stack: 'sluice' | 'grpc-js' }>();
await serve(() => (stack === 'grpc-js' ? grpcJsStack() : sluiceStack()));
