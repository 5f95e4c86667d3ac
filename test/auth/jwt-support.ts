// Helpers for the JWT tests: key pairs of each family, tokens signed with jose,
// and a JWK set served on loopback that a test can rotate or make stall.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
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

export interface JwksServer {
  url: string;
  /** How many times the set was asked for. */
  fetches: number;
  keys: JWK[];
  /** While true, requests are held unanswered (a provider that stalls). */
  stall: boolean;
  close(): Promise<void>;
}

export function startJwks(keys: JWK[]): Promise<JwksServer> {
  const held: ServerResponse[] = [];
  const state = { fetches: 0, keys, stall: false } as JwksServer;
  const server: Server = createServer((_req: IncomingMessage, res: ServerResponse) => {
    state.fetches++;
    if (state.stall) {
      held.push(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys }));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
      state.close = () =>
        new Promise<void>((done) => {
          for (const res of held) res.destroy();
          server.close(() => done());
          server.closeAllConnections();
        });
      resolve(state);
    });
  });
}
