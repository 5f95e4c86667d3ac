// The Redis store with a CLIENT span around each call that reaches Redis (a
// decision's script, a lease, an adjust), under the active span. A Proxy, so
// the store keeps every other member (its connection, its problem watcher) as
// it is; the resilience layer above it cannot tell.
import { SpanKind, SpanStatusCode, type Tracer, context, trace } from '@opentelemetry/api';
import type { SharedStore } from '../stores/store.js';

/** The store's calls that travel to Redis on a request's path. */
const TRACED = new Set(['consume', 'consumeAll', 'consumePenalized', 'lease', 'adjust', 'peek']);

export function tracedStore<S extends SharedStore>(store: S, tracer: Tracer): S {
  const wrapped = new Map<string, (...args: unknown[]) => Promise<unknown>>();
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof name !== 'string' || !TRACED.has(name) || typeof value !== 'function') return value;
      let traced = wrapped.get(name);
      if (!traced) {
        traced = (...args: unknown[]) => call(tracer, name, () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
        wrapped.set(name, traced);
      }
      return traced;
    },
  });
}

function call(tracer: Tracer, name: string, run: () => Promise<unknown>): Promise<unknown> {
  if (!trace.getSpan(context.active())?.isRecording()) return run();
  const span = tracer.startSpan(`redis ${name}`, { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'redis', 'db.operation.name': 'EVALSHA', 'sluice.store.call': name } });
  return run().then(
    (value) => {
      span.end();
      return value;
    },
    (error: unknown) => {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
      throw error;
    },
  );
}
