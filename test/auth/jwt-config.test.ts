// auth: jwt in the config file: every mistake refused at load with its field
// named (and the line), never a secret in the message; what loads is what the
// verifier gets.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError } from '../../src/config/index.js';
import { parseConfig } from '../../src/decision-service/load-config.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-jwt-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
const rsaPem = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
const ecPem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
const SECRET = 'x'.repeat(40);

const ROUTES = 'routes:\n  - { id: orders, path: /orders, upstream: http://127.0.0.1:8090, anonymous: true, limits: [{ id: per-user, key: { claim: sub }, rule: { policy: fixed_window, limit: 5, windowMs: 1000 } }] }\n';
const parse = (auth: string, env: Record<string, string> = {}) => parseConfig(`auth: ${auth}\n${ROUTES}`, { source: 'jwt.yaml', env, baseDir: dir });

function refused(auth: string, pattern: RegExp, env: Record<string, string> = {}) {
  assert.throws(
    () => parse(auth, env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, String(error));
      assert.match(error.message, pattern);
      assert.ok(!error.message.includes(SECRET), 'the secret is never in a message');
      return true;
    },
  );
}

describe('auth: jwt config', () => {
  it('loads a secret from an env variable and a public key from a PEM file, defaults filled', () => {
    const config = parse('{ kind: jwt, algorithms: [HS256], secretEnv: JWT_SECRET, planClaim: plan }', { JWT_SECRET: SECRET });
    const auth = config.routes[0]!.auth!;
    assert.deepEqual(auth.key, { kind: 'secret', secret: SECRET });
    assert.equal(auth.maxTokenBytes, 8_192);
    assert.equal(auth.clockToleranceSeconds, 30);
    assert.deepEqual(auth.token, { kind: 'bearer' });
    const pem = parse(`{ kind: jwt, algorithms: [RS256, PS256], publicKeyFile: ${file('rsa.pem', rsaPem)}, token: { cookie: session } }`);
    assert.equal(pem.routes[0]!.auth!.key.kind, 'pem');
    assert.deepEqual(pem.routes[0]!.auth!.token, { kind: 'cookie', name: 'session' });
  });

  it('names a bad algorithm, alg none among them', () => {
    refused(`{ kind: jwt, algorithms: [RS257], jwksUrl: https://idp.test/jwks }`, /jwt\.yaml:1: auth\.algorithms\[0\]: must be one of HS256/);
    refused(`{ kind: jwt, algorithms: [none], jwksUrl: https://idp.test/jwks }`, /auth\.algorithms\[0\]: must be one of/);
    refused(`{ kind: jwt, jwksUrl: https://idp.test/jwks }`, /auth\.algorithms: is required/);
  });

  it('names a missing secret file, an unset variable and a short secret', () => {
    refused('{ kind: jwt, algorithms: [HS256], secretFile: nowhere.key }', /auth\.secretFile: cannot read nowhere\.key: ENOENT/);
    refused('{ kind: jwt, algorithms: [HS256], secretEnv: JWT_SECRET }', /auth\.secretEnv: the environment variable JWT_SECRET is not set/);
    refused(`{ kind: jwt, algorithms: [HS256], secretFile: ${file('short.key', 'short\n')} }`, /auth\.secretFile: the secret must be at least 32 bytes/);
  });

  it('names a jwks URL that is not http(s)', () => {
    refused('{ kind: jwt, algorithms: [RS256], jwksUrl: file:///etc/jwks.json }', /auth\.jwksUrl: must be an http:\/\/ or https:\/\/ URL/);
  });

  it('refuses an HS algorithm beside a public key (algorithm confusion), and a key that cannot verify an algorithm', () => {
    refused(`{ kind: jwt, algorithms: [RS256, HS256], publicKeyFile: ${file('rsa2.pem', rsaPem)} }`, /auth\.algorithms: HS256 with publicKeyFile is refused: .*algorithm confusion/);
    refused('{ kind: jwt, algorithms: [HS256], jwksUrl: https://idp.test/jwks }', /auth\.algorithms: HS256 with jwksUrl is refused/);
    refused('{ kind: jwt, algorithms: [RS256], secretEnv: JWT_SECRET }', /auth\.algorithms: RS256 needs a public key/, { JWT_SECRET: SECRET });
    refused(`{ kind: jwt, algorithms: [ES256], publicKeyFile: ${file('rsa3.pem', rsaPem)} }`, /auth\.publicKeyFile: is a rsa key, which cannot verify ES256/);
    refused(`{ kind: jwt, algorithms: [ES256], publicKeyFile: ${file('garbage.pem', 'not a key')} }`, /auth\.publicKeyFile: is not a PEM public key/);
    const privatePem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    refused(`{ kind: jwt, algorithms: [ES256], publicKeyFile: ${file('private.pem', privatePem)} }`, /holds a private key/);
    assert.equal(parse(`{ kind: jwt, algorithms: [ES256], publicKeyFile: ${file('ec.pem', ecPem)} }`).routes[0]!.auth!.key.kind, 'pem');
  });

  it('needs exactly one key source; a JWK file holds public keys only', () => {
    refused('{ kind: jwt, algorithms: [RS256] }', /auth: give exactly one of secretFile, secretEnv, publicKeyFile, jwksFile, jwksUrl/);
    refused(`{ kind: jwt, algorithms: [RS256], jwksUrl: https://idp.test/jwks, publicKeyFile: ${file('rsa4.pem', rsaPem)} }`, /auth\.jwksUrl: give exactly one/);
    refused(`{ kind: jwt, algorithms: [RS256], jwksFile: ${file('oct.json', JSON.stringify({ keys: [{ kty: 'oct', k: 'abc' }] }))} }`, /auth\.jwksFile: must hold public keys only/);
    refused(`{ kind: jwt, algorithms: [RS256], jwksFile: ${file('bad.json', '{')} }`, /auth\.jwksFile: is not JSON/);
  });

  it('a limit keyed by a claim needs auth on its route; anonymous does not mix with tenantClaim', () => {
    assert.throws(() => parseConfig(ROUTES, { source: 'jwt.yaml' }), /routes\[0\]\.limits\[0\]\.key: keys by a JWT claim: the route needs auth/);
    refused('{ kind: jwt, algorithms: [HS256], secretEnv: S, tenantClaim: org_id }', /routes\[0\]\.anonymous: cannot be true with auth\.tenantClaim/, { S: SECRET });
  });

  it('a route says auth: none to opt out, or brings its own', () => {
    const config = parseConfig(
      `auth: { kind: jwt, algorithms: [HS256], secretEnv: S }\nroutes:\n  - { id: a, path: /a, upstream: http://127.0.0.1:1 }\n  - { id: b, path: /b, upstream: http://127.0.0.1:1, auth: none }\n  - { id: c, path: /c, upstream: http://127.0.0.1:1, auth: { kind: jwt, algorithms: [HS512], secretEnv: S } }\n`,
      { source: 'jwt.yaml', env: { S: SECRET } },
    );
    assert.deepEqual(config.routes.map((route) => route.auth?.algorithms), [['HS256'], undefined, ['HS512']]);
    assert.throws(() => parseConfig('routes:\n  - { id: a, path: /a, upstream: http://127.0.0.1:1, auth: { kind: jwt, algorithms: [HS256], secretEnv: S, clockToleranceSeconds: -1 } }\n', { source: 'jwt.yaml', env: { S: SECRET } }), /routes\[0\]\.auth\.clockToleranceSeconds: must be at least 0/);
  });
});
