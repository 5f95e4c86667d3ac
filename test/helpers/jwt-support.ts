// Helpers for the JWT tests: key pairs of each family and tokens signed with
// jose (the JWK set served on loopback is in jwks-server.ts).
import { exportJWK, exportSPKI, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

export interface TestKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  publicPem: string;
}

export async function testKey(alg: 'RS256' | 'ES256' | 'EdDSA' | 'PS256', kid: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519', extractable: true } : { extractable: true });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, publicPem: await exportSPKI(publicKey) };
}

export interface SignOptions {
  issuer?: string;
  audience?: string;
  /** Seconds from now; negative: already expired. */
  expiresIn?: number;
  /** Seconds from now the token becomes valid. */
  notBefore?: number;
  kid?: string;
}

export const ISSUER = 'https://idp.test/';
export const AUDIENCE = 'orders-api';

/** A token signed by `key` (or a raw HMAC secret), iss/aud/exp set as a real provider would. */
export async function sign(key: TestKey | { secret: Uint8Array; alg: string }, claims: JWTPayload, options: SignOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const kid = options.kid ?? ('kid' in key ? key.kid : undefined);
  const jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: key.alg, ...(kid ? { kid } : {}) })
    .setIssuedAt(now)
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setExpirationTime(now + (options.expiresIn ?? 300));
  if (options.notBefore !== undefined) jwt.setNotBefore(now + options.notBefore);
  return jwt.sign('secret' in key ? key.secret : key.privateKey);
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An unsecured JWT (`alg: none`, empty signature), as an attacker would send it. */
export function unsignedToken(claims: JWTPayload, kid?: string): string {
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'none', typ: 'JWT', ...(kid ? { kid } : {}) })}.${b64({ iss: ISSUER, aud: AUDIENCE, exp: now + 300, ...claims })}.`;
}
