// Tracing's step on top of the engine's decision chain (Engine.use,
// steps/compose.ts): a span around each request's limits, the limit step of a
// traced request, a child of whatever span is active (the gateway request, a
// ShouldRateLimit), so the store calls below it are its children. Per limit
// its id, policy, outcome and source (redis, fallback, cache, memory, shadow
// ...) as parallel array attributes; bucket keys only hashed. The calls and
// their decisions pass untouched.
import { context, type Span, SpanKind, trace, type Tracer } from '@opentelemetry/api';
import type { Decision } from '../core/decision.js';
import { hashedId } from '../core/ids.js';
import type { Engine } from '../limiter/engine/engine.js';
import { type Call, outcomeOf, type Step } from '../limiter/steps/compose.js';

const SPAN_NAME = 'sluice.limits';

/** The span step: a request without a recorded parent span costs one check and nothing else. */
export function limitsSpanStep(tracer: Tracer): Step {
  return (next) => (calls) => {
    const span = startSpan(tracer);
    if (span === undefined) return next(calls);
    return context.with(trace.setSpan(context.active(), span), () => next(calls)).then(
      (reply) => {
        describe(span, calls, outcomeOf(calls, reply));
        return reply;
      },
      (error: unknown) => failed(span, error),
    );
  };
}

/** The engine traced: the span step added to its chain. An engine without a chain (`Engine.use` absent) is returned untraced. */
export function traceEngine(engine: Engine, tracer: Tracer): Engine {
  engine.use?.(limitsSpanStep(tracer));
  return engine;
}

/** A span only under a recorded one: a request's spans are recorded together or not at all. */
function startSpan(tracer: Tracer): Span | undefined {
  const parent = trace.getSpan(context.active());
  if (!parent?.isRecording()) return undefined;
  return tracer.startSpan(SPAN_NAME, { kind: SpanKind.INTERNAL });
}

/** allowed, refused, shadow_refused (a shadow limit admitted what it would refuse) or not_consulted (the negative cache decided alone). */
function outcomeName(decision: Decision, consulted: boolean): string {
  if (!consulted) return 'not_consulted';
  if (decision.shadowRefused) return 'shadow_refused';
  return decision.allowed ? 'allowed' : 'refused';
}

function describe(span: Span, calls: readonly Call[], outcome: ReturnType<typeof outcomeOf>): void {
  const governing = calls[outcome.governing];
  span.setAttributes({
    'sluice.decision.allowed': outcome.allowed,
    'sluice.limit.ids': calls.map((call) => call.plan.bucket.name),
    'sluice.limit.policies': calls.map((call) => call.plan.original.policy),
    'sluice.limit.outcomes': outcome.decisions.map((decision, i) => outcomeName(decision, outcome.consulted?.[i] ?? true)),
    'sluice.limit.sources': outcome.decisions.map((decision) => decision.source),
    'sluice.limit.keys': calls.map((call) => hashedId(call.plan.bucket.tag)),
    ...(governing ? { 'sluice.decision.governing': governing.plan.bucket.name } : {}),
  });
  span.end();
}

function failed(span: Span, error: unknown): never {
  span.recordException(error as Error);
  span.setStatus({ code: 2 });
  span.end();
  throw error;
}
