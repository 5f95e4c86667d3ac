// A limit with a penalty box, decided as one: the twin of penalized.lua, which
// runs the two in one script. A key already blocked is refused before its
// limit is consulted (nothing charged, nothing counted); otherwise the limit
// decides as it always does (a refusal charges it nothing) and a refusal is
// then counted by the box, which may start a block there and then.
import type { ModelDecision } from '../../core/decision.js';
import { capacityOf, type Rule } from '../rule.js';
import { policyOf } from '../index.js';
import { type PenaltyConfig, type PenaltyState, stepPenalty } from './model.js';

export interface PenalizedCall {
  readonly policyState: unknown;
  readonly penaltyState: PenaltyState | undefined;
  readonly now: number;
  readonly rule: Rule;
  readonly cost: number;
  readonly penalty: PenaltyConfig;
}

/** What to store: a part is written only when its `write` is set. */
export interface StateWrite<S> {
  write: boolean;
  state: S;
  ttlMs: number;
}

export interface PenalizedStep {
  /** `blockedUntilMs` set when the key is blocked (already, or from this refusal on). */
  decision: ModelDecision & { blockedUntilMs?: number };
  /** The key was already blocked: the limit was not consulted. */
  blocked: boolean;
  policy: StateWrite<unknown>;
  penalty: StateWrite<PenaltyState | undefined>;
}

export function stepPenalized(call: PenalizedCall): PenalizedStep {
  const { now, rule, cost, penalty } = call;
  const gate = stepPenalty(call.penaltyState, now, penalty, false);
  const untouched = { write: false, state: call.penaltyState, ttlMs: 0 };
  if (gate.blocked) {
    const decision = { allowed: false, remaining: 0, limit: capacityOf(rule), resetAfterMs: gate.retryAfterMs, retryAfterMs: gate.retryAfterMs, delayMs: 0, blockedUntilMs: gate.blockedUntilMs };
    return { decision, blocked: true, policy: { write: false, state: call.policyState, ttlMs: 0 }, penalty: untouched };
  }
  const step = policyOf(rule).model.step(call.policyState, now, rule, cost);
  const policy = { write: step.write, state: step.state, ttlMs: step.ttlMs };
  // A peek (cost 0) is not a request: it counts nothing.
  if (step.decision.allowed || cost === 0) return { decision: step.decision, blocked: false, policy, penalty: untouched };
  const counted = stepPenalty(call.penaltyState, now, penalty, true);
  const decision: PenalizedStep['decision'] = { ...step.decision, retryAfterMs: Math.max(step.decision.retryAfterMs, counted.retryAfterMs) };
  if (counted.blockedUntilMs > 0) decision.blockedUntilMs = counted.blockedUntilMs;
  return { decision, blocked: false, policy, penalty: { write: counted.write, state: counted.state, ttlMs: counted.ttlMs } };
}
