// A route's `auth: jwt` as explain shows it: where the token is read, the
// verifier's answer (identify.ts identityOfToken with the gateway's own
// JwtVerifier: verified, or refused with the check that failed), the tenant
// and plan it names and which claims become which upstream headers. Neither
// the token nor a claim's value ever appears: only claim and header names.
import { AUTH_FAILURES, type AuthFailure, isClientFailure } from '../auth/failures.js';
import type { JwtAuthConfig } from '../auth/jwt-config.js';
import { claimHeaderValue } from '../core/claims.js';
import type { GatewayErrorName } from '../core/error-codes.js';
import type { KeyProblem } from '../http/identify.js';
import type { RequestIdentity } from '../request-limits/types.js';
import type { SkipReason } from './limit-explain.js';

/** What identityOfToken answers: the identity, an API key problem (no tenantClaim), or the token refused. */
export type TokenOutcome = RequestIdentity | { problem: KeyProblem } | { refused: AuthFailure };

export interface AuthExplanation {
  /** Where the gateway reads the token: `Authorization: Bearer`, a named header or a cookie. */
  source: { kind: 'bearer' | 'header' | 'cookie'; name: string };
  /** unverified: explainRequest was not given the verifier's answer (explainSample gives it). */
  outcome: 'verified' | 'refused' | 'unverified';
  /** The check that failed (failures.ts): the reason code and its words. */
  reason?: AuthFailure;
  check?: string;
  /** token: the tenant is the tenantClaim's; api-key: the token names none, the API key decides. */
  tenantFrom: 'token' | 'api-key';
  tenantClaim?: string;
  tenant?: string;
  planClaim?: string;
  plan?: string;
  /** auth.forwardClaims: each claim, the upstream header it becomes, and whether the gateway sets it for this token (upstream-plan.ts: a claim it can write as a header) (its value is never shown). */
  forwarded: { claim: string; header: string; present: boolean }[];
}

export function authExplanation(auth: JwtAuthConfig, token: TokenOutcome | undefined): AuthExplanation {
  const source = auth.token.kind === 'bearer' ? { kind: 'bearer' as const, name: 'authorization' } : { kind: auth.token.kind, name: auth.token.name };
  const identity = token !== undefined && !('refused' in token) && !('problem' in token) ? token : undefined;
  const out: AuthExplanation = {
    source,
    outcome: token === undefined ? 'unverified' : 'refused' in token ? 'refused' : 'verified',
    tenantFrom: auth.tenantClaim === undefined ? 'api-key' : 'token',
    ...(auth.tenantClaim !== undefined ? { tenantClaim: auth.tenantClaim } : {}),
    ...(auth.planClaim !== undefined ? { planClaim: auth.planClaim } : {}),
    forwarded: Object.entries(auth.forwardClaims).map(([claim, header]) => ({ claim, header, present: claimHeaderValue(identity?.claims, claim) !== undefined })),
  };
  if (token !== undefined && 'refused' in token) Object.assign(out, { reason: token.refused, check: AUTH_FAILURES[token.refused] });
  if (identity !== undefined && auth.tenantClaim !== undefined && identity.tenant !== undefined) out.tenant = identity.tenant;
  if (identity?.plan !== undefined) out.plan = identity.plan;
  return out;
}

/** The gateway's answer to a refused (or unverified) token, and the skip reason of every limit it never reaches. */
export function authRefusal(token: { refused: AuthFailure } | undefined): { error: GatewayErrorName; skip: SkipReason; summary: string } {
  if (token === undefined) return { error: 'invalid_token', skip: 'invalid_token', summary: 'the token was not verified (explainSample verifies it)' };
  const reason = token.refused;
  const client = isClientFailure(reason);
  return { error: client ? 'invalid_token' : 'auth_unavailable', skip: client ? 'invalid_token' : 'auth_unavailable', summary: `the token is refused before any limit (${reason}: ${AUTH_FAILURES[reason]})` };
}
