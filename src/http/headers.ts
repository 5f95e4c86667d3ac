// What a client is told about its limit: X-RateLimit-* on every limited
// response, Retry-After and a small JSON body on a 429, and optionally the IETF
// fields of draft-ietf-httpapi-ratelimit-headers-11 and an RFC 9457 problem body.
// Shared by the gateway and the in-process adapters.
import type { Decision } from '../core/decision.js';
import { GATEWAY_ERRORS, type GatewayErrorName } from '../core/error-codes.js';
import type { LimitsDecision } from '../limiter/engine/engine.js';
import { policyOf } from '../policies/index.js';
import type { Rule } from '../policies/rule.js';
import type { RuleOrigin } from '../request-limits/types.js';

export interface HeaderOptions {
  /** Add `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers-11). */
  ietf: boolean;
  /** Answer 429 with `application/problem+json` instead of the small JSON body. */
  problemJson: boolean;
}

export const QUOTA_EXCEEDED_TYPE = 'https://iana.org/assignments/http-problem-types#quota-exceeded';

/** The largest integer a structured field (RFC 9651) can carry: 15 digits. */
export const MAX_HEADER_INT = 999_999_999_999_999;

/**
 * A header integer: whole, never negative, at most 15 digits. Rule bounds keep
 * every value far below that; this is the last guard, so no value can ever
 * print as an exponent (`1e+300`) or be refused by a structured-field parser.
 */
export function headerInt(value: number): number {
  if (!(value > 0)) return 0; // also NaN
  return value >= MAX_HEADER_INT ? MAX_HEADER_INT : Math.floor(value);
}

/** Whole seconds, rounded up: never tell a client to come back too early. */
export const ceilSeconds = (ms: number): number => (ms <= 0 ? 0 : headerInt(Math.ceil(ms / 1000)));

/** Retry-After in seconds: the exact deficit rounded up, at least 1. */
export const retryAfterSeconds = (decision: Decision): number => Math.max(1, ceilSeconds(decision.retryAfterMs));

const windows = new WeakMap<Rule, number>();

/** The policy's window in seconds for `RateLimit-Policy: w=`: the time an empty bucket takes to fill. */
export function windowSeconds(rule: Rule): number {
  const policy = policyOf(rule);
  // A window whose length changes (a calendar window: months, DST days): the current one's.
  const currentMs = policy.currentWindowMs?.(rule, Date.now());
  if (currentMs !== undefined) return Math.max(1, headerInt(Math.ceil(currentMs / 1000)));
  let seconds = windows.get(rule);
  if (seconds === undefined) {
    seconds = policy.model.fillMs(rule) / 1000;
    seconds = Math.max(1, headerInt(Math.ceil(seconds)));
    windows.set(rule, seconds);
  }
  return seconds;
}

/** One limit of a request as a client is told about it. */
export interface LimitView {
  readonly limitId: string;
  readonly rule: Rule;
  readonly decision: Decision;
  /** Which rule applied (a plan's, an override ...), for the refusal's log line (docs/plans.md#which-rule-applied). */
  readonly from?: RuleOrigin | undefined;
  /** False for a limit not consulted (the request was refused by another at once): left out of `RateLimit`. */
  readonly consulted?: boolean;
}

/** A request's limits beside their decisions, as the headers describe them. */
export function limitViews(limits: readonly { limitId: string; rule: Rule; from?: RuleOrigin }[], outcome: LimitsDecision): LimitView[] {
  return limits.map((limit, i) => ({ limitId: limit.limitId, rule: limit.rule, decision: outcome.decisions[i]!, consulted: outcome.consulted?.[i] ?? true, from: limit.from }));
}

/**
 * Appends the limit headers to a flat `[name, value, name, value…]` list (what
 * `res.writeHead` takes): `X-RateLimit-*` describe the governing limit (the
 * one that refused, else the one closest to exhaustion); the IETF fields list
 * every limit, named by its id. A refused decision reports 0 remaining.
 */
export function pushLimitsHeaders(out: string[], views: readonly LimitView[], governing: number, options: HeaderOptions): void {
  const { decision } = views[governing]!;
  const remaining = decision.allowed ? headerInt(decision.remaining) : 0;
  // A blocked key gets nothing before its block ends, whatever its bucket holds.
  const resetMs = decision.blockedUntilMs === undefined ? decision.resetAfterMs : Math.max(decision.resetAfterMs, decision.retryAfterMs);
  out.push('X-RateLimit-Limit', String(headerInt(decision.limit)), 'X-RateLimit-Remaining', String(remaining), 'X-RateLimit-Reset', String(ceilSeconds(resetMs)));
  if (options.ietf) {
    // Lists (draft-11 §§ 4, 5): one item per limit; ids need no escaping in an sf-string.
    out.push('RateLimit-Policy', views.map(({ limitId, rule, decision: d }) => `"${limitId}";q=${headerInt(d.limit)};w=${windowSeconds(rule)}`).join(', '));
    const known = views.filter((view) => view.consulted !== false);
    out.push('RateLimit', known.map(({ limitId, decision: d }) => `"${limitId}";r=${d.allowed ? headerInt(d.remaining) : 0};t=${d.allowed ? ceilSeconds(d.resetAfterMs) : retryAfterSeconds(d)}`).join(', '));
  }
}

/** The same for a request with one limit. */
export function pushLimitHeaders(out: string[], decision: Decision, limitId: string, rule: Rule, options: HeaderOptions): void {
  pushLimitsHeaders(out, [{ limitId, rule, decision }], 0, options);
}

export interface Rejection {
  headers: string[];
  body: string;
}

/** The 429 of a request with one limit: headers (limit headers, Retry-After, content type) and body. */
export function rejection(decision: Decision, limitId: string, rule: Rule, options: HeaderOptions): Rejection {
  return rejectionOf([{ limitId, rule, decision }], 0, options);
}

/**
 * The 429 of a request refused by `views[governing]`: Retry-After and the body
 * are its. A key in a penalty box (the decision has `blockedUntilMs`) is told
 * it is `blocked`, and until when.
 */
export function rejectionOf(views: readonly LimitView[], governing: number, options: HeaderOptions): Rejection {
  const { decision, limitId } = views[governing]!;
  const retryAfter = retryAfterSeconds(decision);
  const headers: string[] = ['Retry-After', String(retryAfter)];
  pushLimitsHeaders(headers, views, governing, options);
  const blockedUntil = decision.blockedUntilMs === undefined ? undefined : headerInt(decision.blockedUntilMs);
  if (options.problemJson) {
    headers.push('Content-Type', 'application/problem+json');
    const detail =
      blockedUntil === undefined
        ? `The request quota of limit ${limitId} is exhausted; retry after ${retryAfter} seconds.`
        : `Blocked by the penalty box of limit ${limitId} after repeated refusals; retry after ${retryAfter} seconds.`;
    const body = JSON.stringify({
      type: QUOTA_EXCEEDED_TYPE,
      title: 'Too Many Requests',
      status: GATEWAY_ERRORS.rate_limited.status,
      detail,
      retryAfterMs: headerInt(decision.retryAfterMs),
      ...(blockedUntil === undefined ? {} : { error: 'blocked', blockedUntilMs: blockedUntil }),
    });
    return { headers, body };
  }
  headers.push('Content-Type', 'application/json');
  const name: GatewayErrorName = blockedUntil === undefined ? 'rate_limited' : 'blocked';
  const until = blockedUntil === undefined ? '' : `,"blockedUntilMs":${blockedUntil}`;
  return { headers, body: `{"error":"${name}","retryAfterMs":${headerInt(decision.retryAfterMs)}${until}}` };
}
