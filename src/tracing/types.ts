// What the gateway and the decision service see of tracing: a few small
// interfaces, types only, so that neither loads an OpenTelemetry package.
// With tracing off they hold `undefined` and pay one check per request;
// with it on, start.ts builds these over the SDK (docs/observability.md).
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Engine } from '../limiter/engine/engine.js';
import type { SharedStore } from '../stores/store.js';

/** One gateway request's span, from its arrival to its response's end. */
export interface RequestTrace {
  /** Runs `fn` with the request's span as the active one (the decision, the Redis call and the logs see it). */
  run(fn: () => void): void;
  /** The matched route (http.route) and the hashed tenant, once known. */
  routed(route: string, path: string, tenant: string | undefined): void;
  /** Starts the upstream call's span: its context is what the upstream receives as traceparent. */
  upstream(method: string): UpstreamTrace;
  /** A WebSocket tunnel's handshake: the request's own span goes upstream as the traceparent's parent. */
  inject(headers: string[]): void;
}

export interface UpstreamTrace {
  /** Replaces any traceparent/tracestate/baggage in the flat header list with this span's (the propagator's inject). */
  inject(headers: string[]): void;
  /** The call's outcome (ok, upstream_timeout ...) and the status the client got. */
  end(outcome: string, status: number): void;
}

/** One decision-service call's span (a ShouldRateLimit over gRPC, or a /decide, /json request). */
export interface CallTrace {
  /** Runs `fn` with the call's span active (the decision and the Redis call become its children). */
  run<T>(fn: () => T): T;
  /** Attributes known after the call began (the domain, the outcome). */
  set(attributes: Readonly<Record<string, string | number | boolean>>): void;
  /** Ends the span with this status (gRPC code, or HTTP status). */
  end(status: { grpcCode?: number; httpStatus?: number; error?: boolean }): void;
}

export interface Tracing {
  /** A gateway request's span: its parent from the request's traceparent, else a new trace. */
  request(req: IncomingMessage, res: ServerResponse): RequestTrace;
  /** A decision-service call: `name` the span's (`ShouldRateLimit`, `POST /decide`), `headers` where its parent comes from (gRPC metadata or HTTP headers). */
  call(name: string, headers: IncomingHttpHeaders | Readonly<Record<string, string | undefined>>, attributes: Readonly<Record<string, string | number>>): CallTrace;
  /** The engine with a span around each decision, per limit its id, policy, outcome and source (limits-span.ts: a step added to its chain). */
  engine(inner: Engine): Engine;
  /** The Redis store with a span around each call. */
  store<S extends SharedStore>(inner: S): S;
  /** The active span's ids, for a log line; empty outside a traced request. */
  logFields(): { trace_id?: string; span_id?: string };
  /** Exports what is queued (bounded by the export timeout), then stops. */
  shutdown(): Promise<void>;
}
