// response_headers_to_add: X-RateLimit-* (and with headers.ietf the IETF
// fields) of one descriptor's limit, Retry-After when the request is refused:
// the refusing descriptor's, else the one closest to exhaustion, so Envoy
// passes them on.
import type { Decision } from '../core/decision.js';
import type { Rule } from '../policies/rule.js';
import { type HeaderOptions, pushLimitHeaders } from '../http/headers.js';
import { closestToExhaustion } from '../limiter/steps/compose.js';
import { type Code, type Outcome, type RlsStatus, untilResetMs } from './rls-status.js';

interface View {
  readonly outcome: Outcome;
  readonly rule: Rule;
  readonly decision: Decision;
}

export function responseHeaders(outcomes: readonly (Outcome | undefined)[], statuses: readonly RlsStatus[], overall: Code, nowMs: number, options: HeaderOptions): { key: string; value: string }[] {
  const indexes = outcomes.flatMap((outcome, i) => (outcome ? [i] : []));
  if (indexes.length === 0) return [];
  const views = indexes.map((i) => viewOf(outcomes[i]!, overall, nowMs));
  const refusing = indexes.findIndex((i) => statuses[i]!.code === 'OVER_LIMIT' && !outcomes[i]!.plan.quota);
  const anyOver = indexes.findIndex((i) => statuses[i]!.code === 'OVER_LIMIT');
  const governing = overall === 'OVER_LIMIT' ? (refusing >= 0 ? refusing : Math.max(0, anyOver)) : closestToExhaustion(views.map((view) => view.decision));
  const view = views[governing]!;
  const flat: string[] = [];
  if (!view.decision.allowed) flat.push('Retry-After', String(Math.max(1, Math.ceil(view.decision.retryAfterMs / 1000))));
  pushLimitHeaders(flat, view.decision, view.outcome.plan.headerId, view.rule, options);
  const out: { key: string; value: string }[] = [];
  for (let i = 0; i < flat.length; i += 2) out.push({ key: flat[i]!, value: flat[i + 1]! });
  return out;
}

/** The descriptor's limit as the headers show it: its refusing rule (or the tightest), refused only when the request is. */
function viewOf(outcome: Outcome, overall: Code, nowMs: number): View {
  const { plan, decisions } = outcome;
  if (decisions.length === 0) {
    const rule: Rule = plan.calendar ? { policy: 'fixed_window', limit: 0, calendar: plan.calendar } : { policy: 'fixed_window', limit: 0, windowMs: plan.unitSeconds * 1000 };
    const untilMs = untilResetMs(outcome, nowMs);
    return { outcome, rule, decision: { allowed: false, remaining: 0, limit: 0, resetAfterMs: untilMs, retryAfterMs: untilMs, delayMs: 0, source: 'memory' } };
  }
  const refused = decisions.findIndex((decision) => !decision.allowed);
  const k = refused >= 0 ? refused : closestToExhaustion(decisions);
  const rule = plan.calls[k]!.rule;
  const own = decisions[k]!;
  const over = outcome.over && !plan.shadow;
  if (overall === 'OK' || !over) return { outcome, rule, decision: own.allowed && own.retryAfterMs === 0 ? own : { ...own, allowed: true, retryAfterMs: 0 } };
  const untilMs = untilResetMs(outcome, nowMs);
  return { outcome, rule, decision: { ...own, allowed: false, remaining: 0, retryAfterMs: Math.max(own.retryAfterMs, untilMs) } };
}
