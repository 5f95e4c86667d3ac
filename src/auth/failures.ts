// Why a request's token was refused: a small fixed set, so the reason can be a
// metrics label, the `error_description` of WWW-Authenticate and the `reason`
// of the JSON body. None of them ever carries the token or a claim's value.
import { lazyCounter } from '../metrics/lazy-metrics.js';
import { resilienceRegistry } from '../metrics/registry.js';

export const AUTH_FAILURES = {
  missing: 'no token in the request',
  malformed: 'the token is not a well-formed JWS compact JWT',
  too_large: 'the token is longer than maxTokenBytes',
  expired: 'the token has expired (exp)',
  not_yet_valid: 'the token is not valid yet (nbf)',
  bad_issuer: 'the token has the wrong issuer (iss)',
  bad_audience: 'the token has the wrong audience (aud)',
  bad_signature: 'the token signature does not verify',
  unknown_key: 'no key matches the token kid',
  bad_algorithm: 'the token algorithm is not allowed',
  bad_claim: 'a claim the gateway reads is missing or not an id',
  jwks_unavailable: 'the key set could not be fetched in time',
} as const;

export type AuthFailure = keyof typeof AUTH_FAILURES;

/** The failures the client can fix (401); jwks_unavailable is the gateway's (503). */
export const isClientFailure = (reason: AuthFailure): boolean => reason !== 'jwks_unavailable';

/**
 * `WWW-Authenticate` of a refused token (RFC 6750 §3): which check failed, in
 * words from the fixed set above. A missing token gets `invalid_token` too
 * (RFC 6750 would allow the bare challenge), so every refusal names its check.
 */
export function wwwAuthenticate(reason: AuthFailure): string {
  return `Bearer error="invalid_token", error_description="${AUTH_FAILURES[reason]}"`;
}

const refusals = lazyCounter(resilienceRegistry, {
  name: 'sluice_auth_refusals_total',
  help: 'Requests refused by JWT authentication, by reason (missing, malformed, too_large, expired, not_yet_valid, bad_issuer, bad_audience, bad_signature, unknown_key, bad_algorithm, bad_claim, jwks_unavailable)',
  labelNames: ['reason'] as const,
});

export function countAuthFailure(reason: AuthFailure): void {
  refusals.inc({ reason });
}
