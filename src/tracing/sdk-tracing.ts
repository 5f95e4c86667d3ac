// The Tracing interface (types.ts) over the OpenTelemetry API: the gateway
// request's SERVER span (HTTP semantic conventions), the upstream call's CLIENT
// span whose context goes upstream as traceparent, and the decision service's
// calls. Tenants and bucket keys appear only hashed (core/ids.ts hashedId).
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { type Context, context, defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type TextMapPropagator, type Tracer, trace } from '@opentelemetry/api';
import { hashedId } from '../core/ids.js';
import type { Engine } from '../limiter/engine/engine.js';
import type { SharedStore } from '../stores/store.js';
import type { BoundedProcessor } from './export-queue.js';
import { setQueueProbe } from '../metrics/trace-export.js';
import { traceEngine } from './limits-span.js';
import { tracedStore } from './traced-store.js';
import type { CallTrace, RequestTrace, Tracing, UpstreamTrace } from './types.js';

/** The headers the propagator owns: a client's are read as the parent, never forwarded as they came. */
const PROPAGATION_HEADERS = new Set(['traceparent', 'tracestate', 'baggage']);
/** RFC 9110's methods and PATCH; any other is `_OTHER` (the semantic conventions' rule: no unbounded span names). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH']);

export interface SdkParts {
  tracer: Tracer;
  propagator: TextMapPropagator;
  processor: BoundedProcessor;
  shutdown: () => Promise<void>;
}

export class SdkTracing implements Tracing {
  private readonly tracer: Tracer;
  private readonly propagator: TextMapPropagator;

  constructor(private readonly parts: SdkParts) {
    this.tracer = parts.tracer;
    this.propagator = parts.propagator;
    setQueueProbe(() => parts.processor.queued());
  }

  request(req: IncomingMessage, res: ServerResponse): RequestTrace {
    const parent = this.propagator.extract(ROOT_CONTEXT, req.headers, defaultTextMapGetter);
    const method = KNOWN_METHODS.has(req.method ?? '') ? req.method! : '_OTHER';
    const span = this.tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: serverAttributes(req, method) }, parent);
    const active = trace.setSpan(parent, span);
    res.once('close', () => endHttp(span, res.statusCode, res.writableFinished));
    return new GatewayRequest({ tracer: this.tracer, propagator: this.propagator, span, active, method });
  }

  call(name: string, headers: IncomingHttpHeaders | Readonly<Record<string, string | undefined>>, attributes: Readonly<Record<string, string | number>>): CallTrace {
    const parent = this.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    return new DecisionCall(span, trace.setSpan(parent, span));
  }

  engine(inner: Engine): Engine {
    return traceEngine(inner, this.tracer);
  }

  store<S extends SharedStore>(inner: S): S {
    return tracedStore(inner, this.tracer);
  }

  logFields(): { trace_id?: string; span_id?: string } {
    const span = trace.getSpan(context.active());
    if (span === undefined) return {};
    const { traceId, spanId } = span.spanContext();
    return { trace_id: traceId, span_id: spanId };
  }

  async shutdown(): Promise<void> {
    setQueueProbe(undefined);
    await this.parts.shutdown();
  }
}

function serverAttributes(req: IncomingMessage, method: string): Record<string, string | number> {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  const host = req.headers[':authority'] ?? req.headers.host ?? '';
  const colon = typeof host === 'string' ? host.lastIndexOf(':') : -1;
  const attributes: Record<string, string | number> = {
    'http.request.method': method,
    'url.path': query === -1 ? url : url.slice(0, query), // never the query: it may hold a key
    'url.scheme': (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
    'network.protocol.version': req.httpVersion,
  };
  if (typeof host === 'string' && host !== '') attributes['server.address'] = colon > host.lastIndexOf(']') ? host.slice(0, colon) : host;
  if (colon > 0 && typeof host === 'string' && colon > host.lastIndexOf(']')) attributes['server.port'] = Number(host.slice(colon + 1));
  if (method === '_OTHER') attributes['http.request.method_original'] = (req.method ?? '').slice(0, 32);
  return attributes;
}

/** A SERVER span's end: 5xx is an error, 4xx is the client's (the HTTP conventions); a response cut short is an error too. */
function endHttp(span: Span, status: number, finished: boolean): void {
  span.setAttribute('http.response.status_code', status);
  if (status >= 500) {
    span.setAttribute('error.type', String(status));
    span.setStatus({ code: SpanStatusCode.ERROR });
  } else if (!finished) {
    span.setAttribute('error.type', 'aborted');
    span.setStatus({ code: SpanStatusCode.ERROR, message: 'the response did not finish (the client left)' });
  }
  span.end();
}

interface RequestParts {
  tracer: Tracer;
  propagator: TextMapPropagator;
  span: Span;
  active: Context;
  method: string;
}

class GatewayRequest implements RequestTrace {
  constructor(private readonly parts: RequestParts) {}

  run(fn: () => void): void {
    context.with(this.parts.active, fn);
  }

  routed(route: string, path: string, tenant: string | undefined): void {
    const { span, method } = this.parts;
    if (!span.isRecording()) return;
    span.updateName(`${method} ${path}`);
    span.setAttribute('http.route', path);
    span.setAttribute('sluice.route', route);
    if (tenant !== undefined) span.setAttribute('sluice.tenant', hashedId(tenant));
  }

  inject(headers: string[]): void {
    injectInto(headers, this.parts.active, this.parts.propagator);
  }

  upstream(method: string): UpstreamTrace {
    const { tracer, propagator, active } = this.parts;
    const span = tracer.startSpan(KNOWN_METHODS.has(method) ? method : '_OTHER', { kind: SpanKind.CLIENT, attributes: { 'http.request.method': method } }, active);
    const own = trace.setSpan(active, span);
    return {
      inject: (headers) => injectInto(headers, own, propagator),
      end(outcome, status) {
        if (span.isRecording()) {
          span.setAttribute('sluice.upstream.outcome', outcome);
          if (outcome === 'ok') span.setAttribute('http.response.status_code', status);
          else {
            span.setAttribute('error.type', outcome);
            if (outcome !== 'aborted') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
          }
        }
        span.end();
      },
    };
  }
}

/** The propagator's headers for `active` in place of any the client sent (a flat name, value list). */
function injectInto(headers: string[], active: Context, propagator: TextMapPropagator): void {
  for (let i = headers.length - 2; i >= 0; i -= 2) if (PROPAGATION_HEADERS.has(headers[i]!.toLowerCase())) headers.splice(i, 2);
  const carrier: Record<string, string> = {};
  propagator.inject(active, carrier, defaultTextMapSetter);
  for (const name in carrier) headers.push(name, carrier[name]!);
}

class DecisionCall implements CallTrace {
  constructor(
    private readonly span: Span,
    private readonly active: Context,
  ) {}

  run<T>(fn: () => T): T {
    return context.with(this.active, fn);
  }

  set(attributes: Readonly<Record<string, string | number | boolean>>): void {
    if (this.span.isRecording()) this.span.setAttributes(attributes);
  }

  end({ grpcCode, httpStatus, error }: { grpcCode?: number; httpStatus?: number; error?: boolean }): void {
    if (grpcCode !== undefined) this.span.setAttribute('rpc.grpc.status_code', grpcCode);
    if (httpStatus !== undefined) this.span.setAttribute('http.response.status_code', httpStatus);
    if (error || (httpStatus ?? 0) >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
    this.span.end();
  }
}
