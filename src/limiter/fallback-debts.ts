// What the local fallback admitted while the breaker was open, charged to
// Redis once it answers again. Without it Redis never hears of those requests:
// its bucket refills through the outage and the next burst is admitted twice
// (once locally, once from the refilled shared bucket), so a flapping breaker
// over-admits a little on every flap.
//
// Only open-breaker admissions count: those calls never reached Redis. An
// admission after a deadline miss with the breaker still closed may have a twin
// that Redis took; the fallback already weighs those (fallback-limiter.ts).
import type { BucketKey } from '../core/ids.js';
import { capacityOf, type Rule } from '../core/rule.js';
import { BoundedLru } from './lru.js';

export interface Debt {
  /** The bucket and rule the units belong to. */
  bucket: BucketKey;
  rule: Rule;
  /** The rule's fingerprint: a changed limit starts the count afresh. */
  fingerprint: string;
  units: number;
}

export class FallbackDebts {
  private readonly debts: BoundedLru<string, Debt>;

  /** `maxKeys` bounds the memory: past it, the least recently charged keys are forgiven. */
  constructor(maxKeys: number) {
    this.debts = new BoundedLru(maxKeys);
  }

  /** Counts `units` admitted locally on `bucket` (never more than the rule's capacity: Redis could not hold more). */
  add(bucket: BucketKey, rule: Rule, fingerprint: string, units: number): void {
    const debt = this.debts.get(bucket.key);
    if (debt === undefined || debt.fingerprint !== fingerprint) {
      this.debts.set(bucket.key, { bucket, rule, fingerprint, units: Math.min(units, capacityOf(rule)) });
      return;
    }
    debt.units = Math.min(debt.units + units, capacityOf(rule));
  }

  /** Whether `key` is owed. */
  has(key: string): boolean {
    return this.debts.peek(key) !== undefined;
  }

  /** Hands over the debt of `key` and forgets it. */
  take(key: string): Debt | undefined;
  /** Hands over up to `count` debts and forgets them. */
  take(count: number): Debt[];
  take(which: string | number): Debt | undefined | Debt[] {
    if (typeof which === 'string') {
      const debt = this.debts.peek(which);
      if (debt !== undefined) this.debts.delete(which);
      return debt;
    }
    const some: Debt[] = [];
    for (const key of this.debts.keys()) {
      if (some.length === which) break;
      some.push(this.debts.peek(key)!);
    }
    for (const debt of some) this.debts.delete(debt.bucket.key);
    return some;
  }
}
