// The engine with a span around each decision: the limit step of a traced
// request, a child of whatever span is active (the gateway request, a
// ShouldRateLimit). Per limit its id, policy, outcome and source (redis,
// fallback, cache, memory ...) as parallel array attributes; bucket keys only
// hashed. The engine underneath is untouched: same calls, same decisions.
import { context, SpanKind, type Span, type Tracer, trace } from '@opentelemetry/api';
import type { Decision } from '../core/decision.js';
import { hashedId } from '../core/ids.js';
import type { Rule } from '../core/rule.js';
import type { Engine, EngineCounters, EngineHealth, LimitCall, LimitsDecision } from '../limiter/engine/engine.js';
import type { BlockedKey, BucketInfo } from '../stores/store.js';

const SPAN_NAME = 'sluice.limits';

export class TracedEngine implements Engine {
  constructor(
    readonly inner: Engine,
    private readonly tracer: Tracer,
  ) {}

  decide(tenant: string, route: string, rule: Rule, cost?: number): Promise<Decision> {
    const span = this.startSpan();
    if (span === undefined) return this.inner.decide(tenant, route, rule, cost);
    return context.with(trace.setSpan(context.active(), span), () => this.inner.decide(tenant, route, rule, cost)).then(
      (decision) => {
        describe(span, [{ tag: tenant, name: route, rule, cost: cost ?? 1 }], { allowed: decision.allowed, decisions: [decision], governing: 0 });
        return decision;
      },
      (error: unknown) => failed(span, error),
    );
  }

  decideAll(calls: readonly LimitCall[]): Promise<LimitsDecision> {
    const span = this.startSpan();
    if (span === undefined) return this.inner.decideAll(calls);
    return context.with(trace.setSpan(context.active(), span), () => this.inner.decideAll(calls)).then(
      (outcome) => {
        describe(span, calls, outcome);
        return outcome;
      },
      (error: unknown) => failed(span, error),
    );
  }

  /** A span only under a recorded one: a request's spans are recorded together or not at all. */
  private startSpan(): Span | undefined {
    const parent = trace.getSpan(context.active());
    if (!parent?.isRecording()) return undefined;
    return this.tracer.startSpan(SPAN_NAME, { kind: SpanKind.INTERNAL });
  }

  peek(tenant: string, route: string, rule: Rule): Promise<Decision> {
    return this.inner.peek(tenant, route, rule);
  }

  reset(tenant: string, route: string, rule: Rule): Promise<void> {
    return this.inner.reset(tenant, route, rule);
  }

  adjust(tenant: string, route: string, rule: Rule, delta: number): Promise<void> {
    if (this.inner.adjust === undefined) return Promise.reject(new Error('the engine cannot adjust a bucket'));
    return this.inner.adjust(tenant, route, rule, delta);
  }

  inspect(tenant: string, route: string, rule: Rule): Promise<BucketInfo> {
    return this.inner.inspect(tenant, route, rule);
  }

  listBlocked(limit?: number): Promise<BlockedKey[]> {
    return this.inner.listBlocked(limit);
  }

  liftBlock(key: string): Promise<boolean> {
    return this.inner.liftBlock(key);
  }

  health(): EngineHealth {
    return this.inner.health();
  }

  counters(): EngineCounters {
    return this.inner.counters();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** allowed, refused, shadow_refused (a shadow limit admitted what it would refuse) or not_consulted (the negative cache decided alone). */
function outcomeOf(decision: Decision, consulted: boolean): string {
  if (!consulted) return 'not_consulted';
  if (decision.shadowRefused) return 'shadow_refused';
  return decision.allowed ? 'allowed' : 'refused';
}

function describe(span: Span, calls: readonly LimitCall[], outcome: LimitsDecision): void {
  const governing = calls[outcome.governing];
  span.setAttributes({
    'sluice.decision.allowed': outcome.allowed,
    'sluice.limit.ids': calls.map((call) => call.name),
    'sluice.limit.policies': calls.map((call) => call.rule.policy),
    'sluice.limit.outcomes': outcome.decisions.map((decision, i) => outcomeOf(decision, outcome.consulted?.[i] ?? true)),
    'sluice.limit.sources': outcome.decisions.map((decision) => decision.source),
    'sluice.limit.keys': calls.map((call) => hashedId(call.tag)),
    ...(governing ? { 'sluice.decision.governing': governing.name } : {}),
  });
  span.end();
}

function failed(span: Span, error: unknown): never {
  span.recordException(error as Error);
  span.setStatus({ code: 2 });
  span.end();
  throw error;
}
