// Several limits decided as one: the model composition that the memory store
// runs and that the multi-limit Lua script (src/stores/redis/multi-script.ts)
// twins. Every limit's model steps on its own state; the request is admitted
// only when every enforced (non-shadow) limit admits, and then every state is
// written; otherwise none is, and a limit that would have admitted reports
// what a peek sees (it was not charged).
import type { ModelDecision } from '../core/decision.js';
import { policyOf, type Rule } from './index.js';

export interface ComposedCall {
  readonly state: unknown;
  readonly rule: Rule;
  readonly cost: number;
  /** A shadow limit is counted but never refuses the request. */
  readonly shadow: boolean;
}

export interface ComposedStep {
  decision: ModelDecision;
  /** Whether `state` must be stored (only when the request was admitted). */
  write: boolean;
  state: unknown;
  ttlMs: number;
}

export interface ComposedResult {
  /** Whether every enforced limit admitted: then, and only then, states are written. */
  admitted: boolean;
  steps: ComposedStep[];
}

/** Decides every call at `now`: all states written, or none. */
export function stepAll(calls: readonly ComposedCall[], now: number): ComposedResult {
  const steps = calls.map((call) => {
    const result = policyOf(call.rule).model.step(call.state, now, call.rule, call.cost);
    return { decision: result.decision, write: result.write, state: result.state, ttlMs: result.ttlMs };
  });
  const admitted = steps.every((step, i) => step.decision.allowed || calls[i]!.shadow);
  if (admitted) return { admitted, steps };
  return { admitted, steps: steps.map((step, i) => (step.decision.allowed ? uncharged(calls[i]!, now) : { ...step, write: false })) };
}

/** A limit that admitted a refused request: not charged, so it reports a peek of its untouched state. */
function uncharged(call: ComposedCall, now: number): ComposedStep {
  const peek = policyOf(call.rule).model.step(call.state, now, call.rule, 0);
  return { decision: { ...peek.decision, allowed: true, retryAfterMs: 0, delayMs: 0 }, write: false, state: call.state, ttlMs: 0 };
}
