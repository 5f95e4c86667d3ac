// "Over limit until T" for refused keys: a flood of refused requests costs no
// Redis call until T. Bounded (LRU) and matched on the rule's fingerprint, so a
// raised limit takes effect at once instead of after T.
// The chain's step around it: steps/negative-step.ts.
import type { Decision } from '../../core/decision.js';
import { BoundedLru } from './lru.js';

/**
 * How long a penalty block is remembered at a time: a block lifted by an
 * admin (on any instance) reaches every instance's cache within this, while a
 * blocked key hammering the gateway costs at most one store call per this long.
 */
export const BLOCK_CACHE_MS = 1000;

interface Refusal {
  /** A penalty block's end (local time), when the refusal is one: the decision carries it. */
  blockEnd?: number;
  blockedUntilMs?: number;
  fingerprint: string;
  /** Local time until which the key stays refused. */
  until: number;
  /** Smallest cost known to be refused: a cheaper request may still fit. */
  cost: number;
  limit: number;
}

export class NegativeCache {
  private readonly entries: BoundedLru<string, Refusal>;

  constructor(maxKeys: number) {
    this.entries = new BoundedLru(maxKeys);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cached refusal for `cost` on `key` under the rule with `fingerprint`, if still valid at `now`. */
  get(key: string, fingerprint: string, cost: number, now: number): Decision | undefined {
    const refusal = this.entries.peek(key);
    if (refusal === undefined) return undefined;
    if (refusal.until <= now) {
      this.entries.delete(key);
      return undefined;
    }
    if (refusal.fingerprint !== fingerprint || cost < refusal.cost) return undefined;
    if (refusal.blockEnd !== undefined) {
      const retryAfterMs = Math.ceil(refusal.blockEnd - now);
      return { allowed: false, remaining: 0, limit: refusal.limit, resetAfterMs: retryAfterMs, retryAfterMs, delayMs: 0, source: 'cache', blockedUntilMs: refusal.blockedUntilMs! };
    }
    const retryAfterMs = Math.ceil(refusal.until - now);
    return { allowed: false, remaining: 0, limit: refusal.limit, resetAfterMs: retryAfterMs, retryAfterMs, delayMs: 0, source: 'cache' };
  }

  /** Records a refusal the store made at `now`. */
  add(key: string, fingerprint: string, cost: number, decision: Decision, now: number): void {
    if (decision.allowed || decision.retryAfterMs <= 0) return;
    this.entries.set(key, { fingerprint, until: now + decision.retryAfterMs, cost, limit: decision.limit });
  }

  /**
   * Records a penalty block the store reported at `now` (a decision with
   * `blockedUntilMs`), for at most BLOCK_CACHE_MS: any cost is refused meanwhile.
   */
  addBlock(key: string, fingerprint: string, decision: Decision, now: number): void {
    if (decision.allowed || decision.blockedUntilMs === undefined || decision.retryAfterMs <= 0) return;
    const blockEnd = now + decision.retryAfterMs;
    this.entries.set(key, { fingerprint, until: Math.min(blockEnd, now + BLOCK_CACHE_MS), cost: 0, limit: decision.limit, blockEnd, blockedUntilMs: decision.blockedUntilMs });
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
