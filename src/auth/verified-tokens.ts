// Tokens already verified, so a client that sends the same token on every
// request pays for its signature once, not per request. An entry is keyed by
// the token's SHA-256 (the cache never holds a token, and a 64 KB token costs
// the same 32 bytes as a short one), lives until the token's `exp` (with the
// clock tolerance the verifier allows) or `maxAgeSeconds` after it was
// verified, whichever comes first, and the whole cache is bounded by
// `maxEntries`, least recently used out first. Failures are never cached: a
// token refused now may be one that is not yet valid, and a flood of bad
// tokens must not push out the good ones.
import { createHash } from 'node:crypto';
import { BoundedLru } from '../core/lru.js';

export interface VerifiedTokenCacheConfig {
  /** 0: no cache, every request verifies its token. */
  readonly maxEntries: number;
  readonly maxAgeSeconds: number;
}

interface Entry<T> {
  readonly identity: T;
  /** Epoch ms after which the entry is verified again. */
  readonly until: number;
}

export class VerifiedTokens<T> {
  private readonly entries: BoundedLru<string, Entry<T>>;

  constructor(
    private readonly config: VerifiedTokenCacheConfig,
    private readonly clockToleranceSeconds: number,
    private readonly now: () => number,
  ) {
    this.entries = new BoundedLru(Math.max(1, config.maxEntries));
  }

  get size(): number {
    return this.entries.size;
  }

  /** The identity a still-valid verification of `token` gave, or undefined (verify it). */
  get(token: string): T | undefined {
    const id = digest(token);
    const entry = this.entries.get(id);
    if (entry === undefined) return undefined;
    if (this.now() < entry.until) return entry.identity;
    this.entries.delete(id);
    return undefined;
  }

  /** Remembers a token that verified; `exp` in epoch seconds, as the payload carries it. */
  add(token: string, identity: T, exp: number | undefined): void {
    const now = this.now();
    const byAge = now + this.config.maxAgeSeconds * 1000;
    const until = typeof exp === 'number' ? Math.min(byAge, (exp + this.clockToleranceSeconds) * 1000) : byAge;
    if (until > now) this.entries.set(digest(token), { identity, until });
  }

  /** Forgets every verification: the keys that made them may be gone (a rotated key set). */
  clear(): void {
    this.entries.clear();
  }
}

const digest = (token: string) => createHash('sha256').update(token).digest('base64');
