// One JwtVerifier per distinct `auth:` section, shared by the routes that use
// it and kept across config reloads while the section is unchanged, so a
// reload neither refetches a JWK set nor forgets its cached keys.
import { createHash } from 'node:crypto';
import type { JwtAuthConfig } from './jwt-config.js';
import { JwtVerifier } from './jwt-verifier.js';

export class VerifierPool {
  private byKey = new Map<string, JwtVerifier>();
  private readonly byConfig = new WeakMap<JwtAuthConfig, JwtVerifier>();

  /** The verifier of a route's auth (undefined: the route needs none). */
  of(auth: JwtAuthConfig | undefined): JwtVerifier | undefined {
    if (auth === undefined) return undefined;
    return this.byConfig.get(auth) ?? this.add(auth, this.byKey);
  }

  /** A reloaded config: verifiers of its routes' sections are kept (or made), the others dropped. */
  reload(auths: readonly (JwtAuthConfig | undefined)[]): void {
    const previous = this.byKey;
    this.byKey = new Map();
    for (const auth of auths) if (auth !== undefined) this.add(auth, previous);
  }

  private add(auth: JwtAuthConfig, previous: ReadonlyMap<string, JwtVerifier>): JwtVerifier {
    // Hashed: the map's key would otherwise hold the secret in clear.
    const key = createHash('sha256').update(JSON.stringify(auth)).digest('hex');
    const verifier = this.byKey.get(key) ?? previous.get(key) ?? new JwtVerifier(auth);
    this.byKey.set(key, verifier);
    this.byConfig.set(auth, verifier);
    return verifier;
  }
}
