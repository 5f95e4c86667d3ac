// A JWK set at a URL (the identity provider's jwks_uri), fetched by jose's
// createRemoteJWKSet (its timeout, one fetch at a time, status and JSON checks)
// under a policy of our own: at most one fetch per cooldown whatever its
// outcome (jose's cooldown counts from the last success only, so a failing
// server would be asked on every unknown kid), and a stale set refreshed in
// the background while its keys keep serving (jose would make the request wait).
import { createLocalJWKSet, createRemoteJWKSet, errors, type JWTHeaderParameters, type FlattenedJWSInput } from 'jose';

export interface RemoteKeysOptions {
  readonly url: string;
  readonly timeoutMs: number;
  readonly cooldownMs: number;
  readonly cacheMaxAgeMs: number;
  /** The clock (tests); default Date.now. */
  readonly now?: () => number;
  /** Called after a fetch that changed the set (a key added, rotated or removed). */
  readonly onKeysChanged?: () => void;
}

type LocalSet = ReturnType<typeof createLocalJWKSet>;

export class RemoteKeys {
  private readonly remote: ReturnType<typeof createRemoteJWKSet>;
  private readonly now: () => number;
  private local: LocalSet | undefined;
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private attemptedAt = Number.NEGATIVE_INFINITY;
  private pending: Promise<void> | undefined;

  constructor(private readonly options: RemoteKeysOptions) {
    // jose's own cache never decides here: every fetch is asked for through reload().
    this.remote = createRemoteJWKSet(new URL(options.url), { timeoutDuration: options.timeoutMs, cooldownDuration: 0, cacheMaxAge: Number.POSITIVE_INFINITY });
    this.now = options.now ?? Date.now;
  }

  /** jose's key getter: the key of the token's `kid` (and alg), fetching the set again at most once per cooldown. */
  readonly getKey = async (header: JWTHeaderParameters, token: FlattenedJWSInput) => {
    if (this.local === undefined) await this.fetch();
    else if (this.now() - this.fetchedAt >= this.options.cacheMaxAgeMs) this.fetch().catch(() => {}); // stale: refreshed behind, served meanwhile
    try {
      return await this.local!(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || this.coolingDown()) throw error;
      await this.fetch(); // an unknown kid: the provider may have rotated its keys
      return await this.local!(header, token);
    }
  };

  /** The key ids now cached (for tests and the guide's troubleshooting). */
  kids(): (string | undefined)[] {
    return this.local?.jwks().keys.map((key) => key.kid) ?? [];
  }

  private coolingDown(): boolean {
    return this.now() - this.attemptedAt < this.options.cooldownMs;
  }

  /** One fetch at a time, and none while cooling down: then the cached set (or, with none, a JWKSTimeout-like failure) answers. */
  private fetch(): Promise<void> {
    if (this.pending) return this.pending;
    if (this.coolingDown()) return this.local ? Promise.resolve() : Promise.reject(new errors.JWKSTimeout('the key set could not be fetched (cooling down)'));
    this.attemptedAt = this.now();
    this.pending = this.remote
      .reload()
      .then(() => {
        const jwks = this.remote.jwks();
        if (jwks === undefined) throw new errors.JWKSInvalid('no key set');
        const changed = this.local !== undefined && JSON.stringify(this.local.jwks()) !== JSON.stringify(jwks);
        this.local = createLocalJWKSet(jwks);
        this.fetchedAt = this.now();
        if (changed) this.options.onKeysChanged?.();
      })
      .finally(() => {
        this.pending = undefined;
      });
    return this.pending;
  }
}
