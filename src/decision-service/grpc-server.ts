// The gRPC face: envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit and
// grpc.health.v1 on their own listener, served on node:http2 itself (measured:
// grpc-js's server costs more CPU per call with an empty handler than a
// forward-auth decision does whole; docs/decision-service.md). Health follows
// readiness: SERVING while running, NOT_SERVING from the start of the drain,
// so Envoy stops sending.
import { createSecureServer, createServer, type Http2SecureServer, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { Logger } from 'pino';
import type { ListenAddress } from '../config/types.js';
import type { Deciders } from './deciders.js';
import { decodeRequest } from './grpc-codec.js';
import { GrpcHealth, HEALTH_CHECK, HEALTH_WATCH } from './grpc-health.js';
import { type GrpcTls, secureOptions, sessionNamesSan } from './grpc-tls.js';
import { watchTlsFiles } from './grpc-tls-watch.js';
import { answerFrame, fail, GrpcError, GrpcStatus, isGrpc, readMessage } from './grpc-wire.js';
import { RLS_SERVICE_NAME } from './proto-files.js';
import { responseFrame } from './rls-response-frame.js';
import { RlsBadRequest, type RlsRequestIn, RlsServiceError } from './rls-request.js';
import { DEFAULT_GRPC_LIMITS, type GrpcRequestLimits } from '../config/decision-service.js';
import type { DecisionObserver } from './engine-and-resolvers.js';
import type { Tracing } from '../tracing/types.js';

const SHOULD_RATE_LIMIT = `/${RLS_SERVICE_NAME}/ShouldRateLimit`;
const ignore = (): void => {};
/** The name envoyproxy/ratelimit registers its health under (server_impl.go); probes ask `-service=ratelimit`. */
const REFERENCE_HEALTH_NAME = 'ratelimit';

/** What the gRPC listener takes besides its deciders and logger; each absent part is off or its default. */
export interface GrpcServerOptions {
  /** Counts each call (the decision service's metrics). */
  readonly observer?: Pick<DecisionObserver, 'call'> | undefined;
  readonly tls?: GrpcTls | undefined;
  /** Connections closed gracefully past this age (the reference's deployment contract). */
  readonly connectionAge?: { maxAgeMs: number; graceMs: number } | undefined;
  readonly limits?: GrpcRequestLimits | undefined;
}

export class RlsGrpcServer {
  private readonly server: Http2Server | Http2SecureServer;
  private readonly health = new GrpcHealth(['', RLS_SERVICE_NAME, REFERENCE_HEALTH_NAME]);
  private readonly sessions = new Set<ServerHttp2Session>();
  private readonly stopWatching: () => void;
  private readonly decode: (bytes: Uint8Array) => RlsRequestIn;
  /** A span per ShouldRateLimit, its parent from the call's traceparent metadata; undefined: tracing off. */
  tracing: Tracing | undefined;

  private readonly observer: Pick<DecisionObserver, 'call'> | undefined;
  private readonly tls: GrpcTls | undefined;
  private readonly connectionAge: { maxAgeMs: number; graceMs: number } | undefined;
  private readonly limits: GrpcRequestLimits;

  /** `deciders.decider` is read per call, so a reload swaps it under a running listener. */
  constructor(
    private readonly deciders: Pick<Deciders, 'decider'>,
    private readonly log: Logger,
    options: GrpcServerOptions = {},
  ) {
    const { tls, limits = DEFAULT_GRPC_LIMITS } = options;
    this.observer = options.observer;
    this.tls = tls;
    this.connectionAge = options.connectionAge;
    this.limits = limits;
    this.decode = (bytes) => decodeRequest(bytes, limits);
    this.server = tls ? createSecureServer(secureOptions(tls)) : createServer();
    this.stopWatching = tls ? watchTlsFiles(this.server as Http2SecureServer, tls, log) : () => {};
    this.server.on('session', (session: ServerHttp2Session) => this.opened(session));
    this.server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => this.route(stream, headers));
  }

  /** Binds; resolves with the port (0 picks a free one). */
  listen({ host, port }: ListenAddress): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  }

  /** Binds a unix socket at `path`. */
  listenUnix(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(path, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  setServing(serving: boolean): void {
    this.health.setAll(serving ? 'SERVING' : 'NOT_SERVING');
  }

  /** Lets calls in flight finish for up to `graceMs`, then cuts the rest. */
  close(graceMs: number): Promise<void> {
    this.setServing(false);
    this.stopWatching();
    this.health.endWatches();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const session of this.sessions) session.close();
    let timer: NodeJS.Timeout | undefined;
    const cut = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        for (const session of this.sessions) session.destroy();
        resolve();
      }, graceMs);
    });
    return Promise.race([closed, cut]).finally(() => clearTimeout(timer));
  }

  private opened(session: ServerHttp2Session): void {
    this.sessions.add(session);
    session.once('close', () => this.sessions.delete(session));
    session.on('error', () => {}); // a client gone mid-write: its streams end with it
    // A connection's age bounded: clients reconnect, so new instances behind a balancer get their share.
    const age = this.connectionAge;
    if (!age) return;
    const goAway = setTimeout(() => {
      session.close();
      setTimeout(() => session.destroy(), age.graceMs).unref();
    }, age.maxAgeMs);
    goAway.unref();
    session.once('close', () => clearTimeout(goAway));
  }

  private route(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    stream.on('error', ignore); // reset by the client: nothing is left to answer
    if (!isGrpc(stream, headers)) return;
    const san = this.tls?.clientSan;
    const path = headers[':path'];
    if (san !== undefined && !sessionNamesSan(stream.session!, san)) fail(stream, GrpcStatus.UNAUTHENTICATED, `the client certificate does not name ${san} (GRPC_CLIENT_TLS_SAN)`);
    else if (path === SHOULD_RATE_LIMIT) void (this.tracing ? this.tracedShouldRateLimit(stream, headers, this.tracing) : this.shouldRateLimit(stream));
    else if (path === HEALTH_CHECK || path === HEALTH_WATCH) void this.healthCall(stream, path);
    else fail(stream, GrpcStatus.UNIMPLEMENTED, `unknown method ${path}`);
  }

  /** The gRPC status the call ended with. */
  private async shouldRateLimit(stream: ServerHttp2Stream): Promise<GrpcStatus> {
    const started = this.observer ? performance.now() : 0;
    try {
      // The size cap refuses while the bytes arrive, before any decoding.
      const message = await readMessage(stream, this.limits.maxMessageBytes);
      answerFrame(stream, responseFrame(await this.deciders.decider.shouldRateLimitMessage(message, this.decode)));
      this.observer?.call('ShouldRateLimit', performance.now() - started, undefined);
      return GrpcStatus.OK;
    } catch (error) {
      const [code, details] = this.failure(error);
      fail(stream, code, details);
      this.observer?.call('ShouldRateLimit', performance.now() - started, 'service_error');
      return code;
    }
  }

  private async tracedShouldRateLimit(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, tracing: Tracing): Promise<void> {
    const call = tracing.call('ShouldRateLimit', headers, { 'rpc.system': 'grpc', 'rpc.service': RLS_SERVICE_NAME, 'rpc.method': 'ShouldRateLimit' });
    const code = await call.run(() => this.shouldRateLimit(stream));
    call.end({ grpcCode: code, error: code === GrpcStatus.INTERNAL || code === GrpcStatus.UNKNOWN });
  }

  private async healthCall(stream: ServerHttp2Stream, path: string): Promise<void> {
    try {
      const request = await readMessage(stream);
      if (path === HEALTH_CHECK) this.health.check(stream, request);
      else this.health.watch(stream, request);
    } catch (error) {
      fail(stream, ...this.failure(error));
    }
  }

  private failure(error: unknown): [GrpcStatus, string] {
    if (error instanceof GrpcError) return [error.code, error.message];
    // The reference's own errors (empty domain, no descriptors) reach Envoy as its do: UNKNOWN.
    if (error instanceof RlsServiceError) return [GrpcStatus.UNKNOWN, error.message.slice(error.field.length + 2)];
    if (error instanceof RlsBadRequest) return [GrpcStatus.INVALID_ARGUMENT, error.message];
    this.log.error({ err: error }, 'unexpected error in ShouldRateLimit');
    return [GrpcStatus.INTERNAL, 'internal error'];
  }
}
