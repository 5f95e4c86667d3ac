// grpc.health.v1.Health on the gRPC listener: Check answers a service's status
// (NOT_FOUND for one it does not know, as grpc-health-check answers), Watch
// sends it, then each change, until the client or the server ends the stream.
import type { ServerHttp2Stream } from 'node:http2';
import { decodeHealthRequest, encodeHealthResponse } from './grpc-codec.js';
import { answerUnary, fail, GrpcStatus, respond, writeMessage } from './grpc-wire.js';

export const HEALTH_CHECK = '/grpc.health.v1.Health/Check';
export const HEALTH_WATCH = '/grpc.health.v1.Health/Watch';

type Serving = 'SERVING' | 'NOT_SERVING';

export class GrpcHealth {
  private readonly statuses = new Map<string, Serving>();
  private readonly watchers = new Map<ServerHttp2Stream, string>();

  constructor(services: readonly string[]) {
    for (const service of services) this.statuses.set(service, 'SERVING');
  }

  setAll(serving: Serving): void {
    for (const service of this.statuses.keys()) this.statuses.set(service, serving);
    for (const [stream, service] of this.watchers) writeMessage(stream, encodeHealthResponse(this.statuses.get(service) ?? 'SERVICE_UNKNOWN'));
  }

  check(stream: ServerHttp2Stream, request: Uint8Array): void {
    const serving = this.statuses.get(decodeHealthRequest(request));
    if (serving) answerUnary(stream, encodeHealthResponse(serving));
    else fail(stream, GrpcStatus.NOT_FOUND, 'unknown service');
  }

  watch(stream: ServerHttp2Stream, request: Uint8Array): void {
    const service = decodeHealthRequest(request);
    respond(stream);
    writeMessage(stream, encodeHealthResponse(this.statuses.get(service) ?? 'SERVICE_UNKNOWN'));
    this.watchers.set(stream, service);
    stream.once('close', () => this.watchers.delete(stream));
  }

  /** Ends every Watch (status OK), so their connections can close. */
  endWatches(): void {
    for (const stream of this.watchers.keys()) if (!stream.destroyed) stream.end();
    this.watchers.clear();
  }
}
