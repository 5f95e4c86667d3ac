// "Over limit until T" for refused keys: a flood of refused requests costs no
// Redis call until T. Bounded (LRU) and matched on the rule's fingerprint, so a
// raised limit takes effect at once instead of after T.
import type { Decision } from '../core/decision.js';
import { BoundedLru } from './lru.js';

interface Refusal {
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
    const retryAfterMs = Math.ceil(refusal.until - now);
    return { allowed: false, remaining: 0, limit: refusal.limit, resetAfterMs: retryAfterMs, retryAfterMs, delayMs: 0, source: 'cache' };
  }

  /** Records a refusal the store made at `now`. */
  add(key: string, fingerprint: string, cost: number, decision: Decision, now: number): void {
    if (decision.allowed || decision.retryAfterMs <= 0) return;
    this.entries.set(key, { fingerprint, until: now + decision.retryAfterMs, cost, limit: decision.limit });
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
