// The gRPC listener asked over raw HTTP/2, as a client that is not grpc-js
// might: what is not gRPC, an unknown method, a compressed, broken, oversized
// or undecodable message and an unknown health service each get their status.
import assert from 'node:assert/strict';
import { connect, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import type { RunningSluice } from '../../src/app.js';
import { GrpcStatus, MAX_MESSAGE_BYTES } from '../../src/decision-service/grpc-wire.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { EXAMPLES, startDecisionSluice } from '../helpers/decision-service-support.js';

interface Reply {
  status: number;
  grpcStatus: string | undefined;
  grpcMessage: string | undefined;
  body: Buffer;
}

const frame = (message: Buffer, flag = 0) => Buffer.concat([Buffer.from([flag]), Buffer.from([0, 0, 0, 0].map((_, i) => (message.length >>> (24 - 8 * i)) & 0xff)), message]);

function post(session: ClientHttp2Session, path: string, body: Buffer, contentType = 'application/grpc'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': contentType, te: 'trailers' });
    let headers: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    stream.on('response', (h) => {
      headers = h;
    });
    stream.on('trailers', (t) => {
      trailers = t;
    });
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => {
      const status = (name: string) => (trailers[name] ?? headers[name]) as string | undefined;
      resolve({ status: Number(headers[':status']), grpcStatus: status('grpc-status'), grpcMessage: status('grpc-message'), body: Buffer.concat(chunks) });
    });
    stream.end(body);
  });
}

describe('the gRPC listener on raw HTTP/2', () => {
  let redis: RedisServer;
  let sluice: RunningSluice;
  let session: ClientHttp2Session;
  const RLS = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';
  // domain "rl", one descriptor {key: "database", value: "users"} (examples/decision/ratelimit-config.yaml)
  const request = Buffer.from('0a02726c12130a110a08646174616261736512057573657273', 'hex');
  before(async () => {
    redis = await startRedis();
    const yaml = `routes: [{ id: r, path: /r, upstream: 'http://127.0.0.1:9' }]\nstore: { url: ${redis.url} }\ndecisionService: { envoyConfig: ['${EXAMPLES}/ratelimit-config.yaml'] }\n`;
    sluice = await startDecisionSluice(yaml);
    session = connect(`http://${sluice.grpcAddress}`);
  });
  after(async () => {
    session?.close();
    await sluice?.close();
    await redis?.stop();
  });

  it('a framed request: 200, application/grpc+proto, one framed message and grpc-status 0 in the trailers', async () => {
    const reply = await post(session, RLS, frame(request));
    assert.deepEqual([reply.status, reply.grpcStatus], [200, '0']);
    assert.equal(reply.body.readUInt32BE(1), reply.body.length - 5);
  });

  it('not gRPC: HTTP 415; an unknown method: UNIMPLEMENTED naming it', async () => {
    assert.equal((await post(session, RLS, frame(request), 'application/json')).status, 415);
    const unknown = await post(session, '/envoy.service.ratelimit.v3.RateLimitService/Other', frame(request));
    assert.deepEqual([unknown.grpcStatus, decodeURIComponent(unknown.grpcMessage!)], [String(GrpcStatus.UNIMPLEMENTED), 'unknown method /envoy.service.ratelimit.v3.RateLimitService/Other']);
  });

  it('a compressed message: UNIMPLEMENTED; a frame whose length is wrong or bytes that are no RateLimitRequest: INTERNAL; too large: RESOURCE_EXHAUSTED', async () => {
    assert.equal((await post(session, RLS, frame(request, 1))).grpcStatus, String(GrpcStatus.UNIMPLEMENTED));
    assert.equal((await post(session, RLS, frame(request).subarray(0, 10))).grpcStatus, String(GrpcStatus.INTERNAL));
    const broken = await post(session, RLS, frame(Buffer.from('0a02726c1203', 'hex')) /* a descriptor cut short */);
    assert.equal(broken.grpcStatus, String(GrpcStatus.INTERNAL));
    assert.match(decodeURIComponent(broken.grpcMessage!), /^cannot decode the request/);
    assert.equal((await post(session, RLS, frame(Buffer.alloc(MAX_MESSAGE_BYTES + 1)))).grpcStatus, String(GrpcStatus.RESOURCE_EXHAUSTED));
    assert.equal((await post(session, RLS, frame(request))).grpcStatus, '0', 'and the connection still answers');
  });

  it('health Check of a service it does not serve: NOT_FOUND', async () => {
    const reply = await post(session, '/grpc.health.v1.Health/Check', frame(Buffer.from('0a046e6f7065', 'hex')));
    assert.equal(reply.grpcStatus, String(GrpcStatus.NOT_FOUND));
  });
});
