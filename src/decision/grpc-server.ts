// The gRPC face: envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit and
// grpc.health.v1 on their own listener. Health follows readiness: SERVING while
// running, NOT_SERVING from the start of the drain, so Envoy stops sending.
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';
import type { ListenAddress } from '../config/types.js';
import { loadRls, RLS_SERVICE_NAME } from './proto-files.js';
import type { DecisionFaces } from './faces.js';
import { type GrpcTls, sanInterceptors, serverCredentials } from './grpc-tls.js';
import type { DecisionObserver } from './deps.js';
import { RlsBadRequest, type RlsRequestIn, RlsServiceError } from './rls-request.js';

export class RlsGrpcServer {
  private readonly server: grpc.Server;
  private readonly health = new HealthImplementation({ '': 'SERVING', [RLS_SERVICE_NAME]: 'SERVING' });

  /** `faces.decider` is read per call, so a reload swaps it under a running listener. */
  constructor(
    faces: Pick<DecisionFaces, 'decider'>,
    private readonly log: Logger,
    observer?: Pick<DecisionObserver, 'call'>,
    private readonly tls?: GrpcTls,
    connectionAge?: { maxAgeMs: number; graceMs: number },
  ) {
    // A connection's age bounded: clients reconnect, so new instances behind a balancer get their share.
    const age = connectionAge ? { 'grpc.max_connection_age_ms': connectionAge.maxAgeMs, 'grpc.max_connection_age_grace_ms': connectionAge.graceMs } : {};
    this.server = new grpc.Server({ interceptors: sanInterceptors(tls), ...age });
    this.server.addService(loadRls().service, {
      ShouldRateLimit: (call: grpc.ServerUnaryCall<RlsRequestIn, unknown>, callback: grpc.sendUnaryData<unknown>) => {
        const started = observer ? performance.now() : 0;
        faces.decider.shouldRateLimit(call.request).then(
          (response) => {
            callback(null, response);
            observer?.call('ShouldRateLimit', performance.now() - started, undefined);
          },
          (error: unknown) => {
            callback(this.failure(error));
            observer?.call('ShouldRateLimit', performance.now() - started, 'service_error');
          },
        );
      },
    });
    this.health.addToServer(this.server);
  }

  /** Binds; resolves with the port (0 picks a free one). */
  listen({ host, port }: ListenAddress): Promise<number> {
    return this.listenOn(host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);
  }

  /** Binds a grpc-js target (`host:port`, `unix:/path`); resolves with the port. */
  listenOn(target: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync(target, serverCredentials(this.tls), (error, bound) => (error ? reject(error) : resolve(bound)));
    });
  }

  setServing(serving: boolean): void {
    const status = serving ? 'SERVING' : 'NOT_SERVING';
    this.health.setStatus('', status);
    this.health.setStatus(RLS_SERVICE_NAME, status);
  }

  /** Lets calls in flight finish for up to `graceMs`, then cuts the rest. */
  close(graceMs: number): Promise<void> {
    this.setServing(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private failure(error: unknown): Partial<grpc.StatusObject> {
    // The reference's own errors (empty domain, no descriptors) reach Envoy as its do: UNKNOWN.
    if (error instanceof RlsServiceError) return { code: grpc.status.UNKNOWN, details: error.message.slice(error.field.length + 2) };
    if (error instanceof RlsBadRequest) return { code: grpc.status.INVALID_ARGUMENT, details: error.message };
    this.log.error({ err: error }, 'unexpected error in ShouldRateLimit');
    return { code: grpc.status.INTERNAL, details: 'internal error' };
  }
}
