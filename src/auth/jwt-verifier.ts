// Verifies a request's JWT with jose (signature, `alg` from the config's
// allow-list only, exp/nbf with the clock tolerance, iss, aud) and reads the
// claims the gateway uses: the tenant, the plan, and the rest kept for limit
// keys and forwarded headers. A failure comes back as one reason of the fixed
// set (failures.ts), never as jose's message, which may quote the token.
import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { createLocalJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { isValidId } from '../core/ids.js';
import type { AuthFailure } from './failures.js';
import type { JwtAuthConfig } from './jwt-config.js';
import { RemoteKeys } from './remote-keys.js';
import { tokenOf } from './token.js';
import { VerifiedTokens } from './verified-tokens.js';

/** Who a verified token says is calling. */
export interface TokenIdentity {
  /** From tenantClaim; undefined without one (the tenant then comes from the API key). */
  readonly tenant: string | undefined;
  /** From planClaim, when the token carries it. */
  readonly plan: string | undefined;
  /** The verified payload: limit keys (`key: {claim}`) and forwardClaims read it. */
  readonly claims: Readonly<JWTPayload>;
}

export class JwtVerifier {
  private readonly key: KeyObject | JWTVerifyGetKey;
  /** The remote set, when the key is a jwksUrl (tests read its cached kids). */
  readonly remote: RemoteKeys | undefined;
  /** Tokens verified before; undefined when the config's cache.maxEntries is 0. */
  readonly verified: VerifiedTokens<TokenIdentity> | undefined;

  /** `now`: the cache's clock (tests); jose reads its own for exp and nbf. */
  constructor(
    readonly config: JwtAuthConfig,
    now: () => number = Date.now,
  ) {
    const source = config.key;
    if (config.cache.maxEntries > 0) this.verified = new VerifiedTokens(config.cache, config.clockToleranceSeconds, now);
    // A changed key set may have dropped the key a cached token was signed with.
    if (source.kind === 'remote') this.remote = new RemoteKeys({ ...source, onKeysChanged: () => this.verified?.clear() });
    this.key =
      source.kind === 'secret'
        ? createSecretKey(Buffer.from(source.secret, 'utf8'))
        : source.kind === 'pem'
          ? createPublicKey(source.pem)
          : source.kind === 'jwks'
            ? createLocalJWKSet(source.jwks)
            : this.remote!.getKey;
  }

  /** The request's token verified, or why it was refused. */
  async identify(headers: IncomingHttpHeaders, rawHeaders?: readonly string[]): Promise<TokenIdentity | AuthFailure> {
    const found = tokenOf(this.config.token, headers, this.config.maxTokenBytes, rawHeaders);
    return typeof found === 'string' ? found : this.verify(found.token);
  }

  async verify(token: string): Promise<TokenIdentity | AuthFailure> {
    const cached = this.verified?.get(token);
    if (cached !== undefined) return cached;
    const { config } = this;
    let payload: JWTPayload;
    try {
      const options = {
        algorithms: [...config.algorithms],
        issuer: config.issuer as string | string[] | undefined,
        audience: config.audience as string | string[] | undefined,
        clockTolerance: config.clockToleranceSeconds,
      };
      // Two overloads (a key, a getter): the same options either way.
      const result = typeof this.key === 'function' ? await jwtVerify(token, this.key, options) : await jwtVerify(token, this.key, options);
      payload = result.payload;
    } catch (error) {
      return failureOf(error);
    }
    const tenant = idClaim(payload, config.tenantClaim);
    if (config.tenantClaim !== undefined && tenant === undefined) return 'bad_claim';
    const plan = idClaim(payload, config.planClaim);
    const identity: TokenIdentity = { tenant, plan, claims: payload };
    this.verified?.add(token, identity, payload.exp);
    return identity;
  }
}

/** A claim used as an id (tenant, plan): a string or number that is a valid id not starting with `~`. */
function idClaim(payload: JWTPayload, claim: string | undefined): string | undefined {
  if (claim === undefined) return undefined;
  const value = payload[claim];
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  return typeof text === 'string' && isValidId(text) && !text.startsWith('~') ? text : undefined;
}

function failureOf(error: unknown): AuthFailure {
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return 'not_yet_valid';
    if (error.claim === 'iss') return 'bad_issuer';
    if (error.claim === 'aud') return 'bad_audience';
    return 'malformed'; // iat or exp of the wrong type
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'bad_signature';
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) return 'unknown_key';
  if (error instanceof errors.JOSEAlgNotAllowed) return 'bad_algorithm';
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return 'jwks_unavailable';
  if (error instanceof errors.JOSEError) return error.code === 'ERR_JOSE_GENERIC' ? 'jwks_unavailable' : 'malformed';
  // Not jose's: the key set's fetch failed (connection refused, DNS).
  return error instanceof TypeError && /fetch/i.test(error.message) ? 'jwks_unavailable' : 'malformed';
}
