// `auth: { kind: jwt }` as loaded: the key source read (secret file or env
// variable, PEM or JWK file) and checked against the algorithms allowed, so a
// config that could be tricked into algorithm confusion (an HS algorithm
// beside a public key) never loads. Each error names its field; none holds a
// secret or a key.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createLocalJWKSet, type JSONWebKeySet } from 'jose';
import type { JwtAlgorithm, JwtAuthEntry } from './jwt-schema.js';
import type { VerifiedTokenCacheConfig } from './verified-tokens.js';

/** Where the verifying key comes from, read at load (a remote set is fetched by the verifier). */
export type JwtKeySource =
  | { readonly kind: 'secret'; readonly secret: string }
  | { readonly kind: 'pem'; readonly pem: string }
  | { readonly kind: 'jwks'; readonly jwks: JSONWebKeySet }
  | { readonly kind: 'remote'; readonly url: string; readonly timeoutMs: number; readonly cooldownMs: number; readonly cacheMaxAgeMs: number };

export type TokenSource = { readonly kind: 'bearer' } | { readonly kind: 'header'; readonly name: string } | { readonly kind: 'cookie'; readonly name: string };

export interface JwtAuthConfig {
  readonly kind: 'jwt';
  readonly algorithms: readonly JwtAlgorithm[];
  readonly key: JwtKeySource;
  readonly issuer: string | readonly string[] | undefined;
  readonly audience: string | readonly string[] | undefined;
  readonly clockToleranceSeconds: number;
  readonly maxTokenBytes: number;
  /** Verified tokens kept (verified-tokens.ts). */
  readonly cache: VerifiedTokenCacheConfig;
  readonly token: TokenSource;
  readonly tenantClaim: string | undefined;
  readonly planClaim: string | undefined;
  /** Claim → header name (lower-cased) the gateway sets upstream. */
  readonly forwardClaims: Readonly<Record<string, string>>;
}

type Path = (string | number)[];
export interface JwtConfigContext {
  /** Throws a ConfigError naming the field (config/load.ts). */
  readonly fail: (path: Path, message: string) => never;
  /** Files are read relative to this. */
  readonly baseDir: string;
  readonly env: Readonly<Record<string, string | undefined>>;
}

const KEY_FIELDS = ['secretFile', 'secretEnv', 'publicKeyFile', 'jwksFile', 'jwksUrl'] as const;
const isHmac = (alg: JwtAlgorithm) => alg.startsWith('HS');
/** The key type (node's asymmetricKeyType) each asymmetric family verifies with. */
const KEY_TYPES: Readonly<Record<string, readonly string[]>> = { RS: ['rsa'], PS: ['rsa', 'rsa-pss'], ES: ['ec'], Ed: ['ed25519', 'ed448'] };
/** RFC 7518 §3.2: an HMAC key at least as long as the hash; HS256's 32 bytes is the floor. */
const MIN_SECRET_BYTES = 32;

export function jwtAuthOf(entry: JwtAuthEntry, at: Path, ctx: JwtConfigContext): JwtAuthConfig {
  const given = KEY_FIELDS.filter((field) => entry[field] !== undefined);
  if (given.length !== 1) ctx.fail(given.length === 0 ? at : [...at, given[1]!], `give exactly one of ${KEY_FIELDS.join(', ')} (the key tokens are verified with)`);
  const field = given[0]!;
  const hmac = entry.algorithms.filter(isHmac);
  const asymmetric = entry.algorithms.filter((alg) => !isHmac(alg));
  const secret = field === 'secretFile' || field === 'secretEnv';
  if (secret && asymmetric.length > 0) ctx.fail([...at, 'algorithms'], `${asymmetric[0]} needs a public key (publicKeyFile, jwksFile or jwksUrl), not ${field}`);
  if (!secret && hmac.length > 0) {
    ctx.fail([...at, 'algorithms'], `${hmac[0]} with ${field} is refused: an HS algorithm verified with a public key lets anyone who has the key sign tokens (algorithm confusion); HS* need secretFile or secretEnv`);
  }
  return {
    kind: 'jwt',
    algorithms: entry.algorithms,
    key: keySourceOf(entry, field, at, ctx),
    issuer: entry.issuer,
    audience: entry.audience,
    clockToleranceSeconds: entry.clockToleranceSeconds,
    maxTokenBytes: entry.maxTokenBytes,
    cache: entry.cache,
    token: entry.token === undefined ? { kind: 'bearer' } : 'header' in entry.token ? { kind: 'header', name: entry.token.header.toLowerCase() } : { kind: 'cookie', name: entry.token.cookie },
    tenantClaim: entry.tenantClaim,
    planClaim: entry.planClaim,
    forwardClaims: Object.fromEntries(Object.entries(entry.forwardClaims).map(([claim, header]) => [claim, header.toLowerCase()])),
  };
}

function keySourceOf(entry: JwtAuthEntry, field: (typeof KEY_FIELDS)[number], at: Path, ctx: JwtConfigContext): JwtKeySource {
  const where = [...at, field];
  switch (field) {
    case 'secretFile':
    case 'secretEnv': {
      const text = field === 'secretFile' ? readFile(entry.secretFile!, where, ctx) : ctx.env[entry.secretEnv!];
      if (text === undefined || text === '') return ctx.fail(where, field === 'secretEnv' ? `the environment variable ${entry.secretEnv} is not set` : 'the file is empty');
      const secret = text.replace(/\r?\n$/, '');
      if (Buffer.byteLength(secret) < MIN_SECRET_BYTES) ctx.fail(where, `the secret must be at least ${MIN_SECRET_BYTES} bytes (RFC 7518 §3.2)`);
      return { kind: 'secret', secret };
    }
    case 'publicKeyFile': {
      const pem = readFile(entry.publicKeyFile!, where, ctx);
      checkKeyFits(publicKeyOf(pem, where, ctx), entry.algorithms, where, ctx);
      return { kind: 'pem', pem };
    }
    case 'jwksFile':
      return { kind: 'jwks', jwks: jwksOf(readFile(entry.jwksFile!, where, ctx), where, ctx) };
    default:
      return { kind: 'remote', url: entry.jwksUrl!, ...entry.jwks };
  }
}

function readFile(file: string, where: Path, ctx: JwtConfigContext): string {
  try {
    return readFileSync(resolve(ctx.baseDir, file), 'utf8');
  } catch (error) {
    // The path and the reason (ENOENT, EACCES), never the content.
    return ctx.fail(where, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function publicKeyOf(pem: string, where: Path, ctx: JwtConfigContext): KeyObject {
  if (pem.includes('PRIVATE KEY')) ctx.fail(where, 'holds a private key: give the public key only (the gateway verifies, it never signs)');
  try {
    return createPublicKey(pem);
  } catch {
    return ctx.fail(where, 'is not a PEM public key or certificate');
  }
}

/** Every asymmetric algorithm allowed must be one this key can verify (an RSA key cannot check ES256). */
function checkKeyFits(key: KeyObject, algorithms: readonly JwtAlgorithm[], where: Path, ctx: JwtConfigContext): void {
  for (const alg of algorithms) {
    const types = KEY_TYPES[alg.slice(0, 2)] ?? [];
    if (!types.includes(key.asymmetricKeyType ?? '')) ctx.fail(where, `is a ${key.asymmetricKeyType} key, which cannot verify ${alg}`);
  }
}

/** A JWK set, or one JWK (made a set of one); jose checks its keys when the set is built. */
function jwksOf(text: string, where: Path, ctx: JwtConfigContext): JSONWebKeySet {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return ctx.fail(where, 'is not JSON');
  }
  const set = (parsed !== null && typeof parsed === 'object' && 'keys' in parsed ? parsed : { keys: [parsed] }) as JSONWebKeySet;
  if (!Array.isArray(set.keys) || set.keys.some((key) => key === null || typeof key !== 'object' || typeof key.kty !== 'string')) return ctx.fail(where, 'must hold a JWK or {"keys": [JWK, …]}');
  if (set.keys.some((key) => key.kty === 'oct' || 'd' in key)) ctx.fail(where, 'must hold public keys only (no "oct" secret and no private "d")');
  try {
    createLocalJWKSet(set);
  } catch (error) {
    ctx.fail(where, `is not a usable JWK set: ${(error as Error).message}`);
  }
  return set;
}
