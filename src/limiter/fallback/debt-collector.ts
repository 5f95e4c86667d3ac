// Charges the shared store for what the fallback admitted while the breaker
// was open (the debts: FallbackDebts, below): all of them once the breaker
// closes, a few keys at a time so a recovering Redis is not flooded, and one
// key's debt just before a request on that key reaches Redis again.
//
// The debts: what the local fallback admitted while the breaker was open, charged to
// Redis once it answers again. Without it Redis never hears of those requests:
// its bucket refills through the outage and the next burst is admitted twice
// (once locally, once from the refilled shared bucket), so a flapping breaker
// over-admits a little on every flap.
//
// Only open-breaker admissions count: those calls never reached Redis. An
// admission after a deadline miss with the breaker still closed may have a twin
// that Redis took; the fallback limiter already weighs those.
import type { Logger } from 'pino';
import type { Decision } from '../../core/decision.js';
import type { BucketKey } from '../../core/ids.js';
import { capacityOf, type Rule } from '../../policies/rule.js';
import { withTimeout } from '../../core/timeout.js';
import type { SharedStore } from '../../stores/store.js';
import { BoundedLru } from '../../core/lru.js';
import type { RedisWord } from './last-states.js';
import { fallbackChargedUnits } from '../../metrics/registry.js';
import type { ChainStats } from '../metrics/stats.js';

/** An error Redis answered with: the command did not run. */
const isErrorReply = (error: unknown) => error instanceof Error && error.name === 'ReplyError';

/** What charge() returns when Redis did not take the charge: the debt is kept. */
const UNREACHED = -1;

/** Debts charged to Redis at once after an outage. */
const CHARGE_CONCURRENCY = 32;

export interface DebtCollectorOptions {
  store: SharedStore;
  /** Most keys owed at once: past it, the least recently charged are forgiven. */
  maxKeys: number;
  /** Deadline of one charge (not on any request's path). */
  timeoutMs: number;
  /** Deadline of the peek a request waits for before its charge (see pay): the decisions' own. */
  peekTimeoutMs: () => number;
  /** Whether a bucket's last word predates the breaker's opening, and what it lost since (last-states.ts). */
  fallback: LastWords;
  stats: ChainStats;
  logger: Logger;
}

/** What the collector asks the fallback limiter (FallbackLimiter, fallback.ts) of a bucket's last word. */
export interface LastWords {
  suspect(key: string): boolean;
  lostBeforeCharge(key: string, redisRule: Rule, word: RedisWord, charging: number): number;
}

export class DebtCollector {
  private readonly debts: FallbackDebts;
  /** Keys whose charge is in flight, and how many: a reply read meanwhile was sent before it landed. */
  private readonly charging = new Map<string, number>();

  constructor(private readonly options: DebtCollectorOptions) {
    this.debts = new FallbackDebts(options.maxKeys);
  }

  /** Whether bucket `key` has units owed, or a charge of them in flight: Redis's word on it does not hold them yet. */
  owes(key: string): boolean {
    return this.debts.has(key) || this.charging.has(key);
  }

  /** Counts `units` admitted locally on `bucket` while the breaker was open. */
  owe(bucket: BucketKey, rule: Rule, fingerprint: string, units: number): void {
    this.debts.add(bucket, rule, fingerprint, units);
  }

  /**
   * Redis answers again and this instance still owes the key what its fallback
   * admitted during the outage: the request waits for the charge (a peek, then
   * the charge, see charge), so the refilled bucket is never spent twice (a
   * half-open probe included). Undefined when nothing is owed (no wait).
   */
  pay(key: string): Promise<void> | undefined {
    const debt = this.debts.take(key);
    if (debt === undefined) return undefined;
    return this.charge(debt, this.options.peekTimeoutMs()).then((units) => (units === UNREACHED ? this.reowe(debt) : this.noteCharged(units)));
  }

  /**
   * The breaker closed: charges every debt. A charge that does not reach Redis
   * (the breaker flapping through a failover) is owed again, for the next
   * request on the key or the next closing; a bucket that cannot take all of
   * it (a policy without adjust) keeps the rest.
   */
  async chargeAll(): Promise<void> {
    const { timeoutMs } = this.options;
    let keys = 0;
    let charged = 0;
    const unreached: Debt[] = [];
    // Debts stay in the map until their turn: a request on an owed key meanwhile pays it first (pay).
    for (let debts = this.debts.take(CHARGE_CONCURRENCY); debts.length > 0; debts = this.debts.take(CHARGE_CONCURRENCY)) {
      keys += debts.length;
      const results = await Promise.all(debts.map((debt) => this.charge(debt, timeoutMs)));
      results.forEach((n, i) => {
        if (n === UNREACHED) unreached.push(debts[i]!);
        else charged += n;
      });
    }
    for (const debt of unreached) this.reowe(debt);
    this.noteCharged(charged);
    if (charged > 0) this.options.logger.info({ keys, units: charged }, 'charged the fallback admissions of the outage to Redis');
  }

  private reowe(debt: Debt): void {
    this.debts.add(debt.bucket, debt.rule, debt.fingerprint, debt.units);
  }

  private noteCharged(units: number): void {
    this.options.stats.chargedUnits += units;
    fallbackChargedUnits.inc(units);
  }

  /**
   * Takes the debt from its bucket whatever is left in it (a debt past empty),
   * or, for a policy without adjust, what is left when the bucket holds less;
   * returns the units taken, or UNREACHED when Redis did not take it (the
   * debt is kept). A peek goes first: one that gets no answer within
   * `peekTimeoutMs` (a node failing over) sends nothing that could land
   * later; and a bucket whose last word predates the breaker's opening is
   * held to it (last-states.ts) before this instance's own admissions are
   * charged, as charged first they would hide writes an old master lost.
   */
  private async charge(debt: Debt, peekTimeoutMs: number): Promise<number> {
    const key = debt.bucket.key;
    this.charging.set(key, (this.charging.get(key) ?? 0) + 1);
    try {
      return await this.chargeNow(debt, peekTimeoutMs);
    } finally {
      const left = this.charging.get(key)! - 1;
      if (left === 0) this.charging.delete(key);
      else this.charging.set(key, left);
    }
  }

  private async chargeNow(debt: Debt, peekTimeoutMs: number): Promise<number> {
    const { store, timeoutMs, fallback } = this.options;
    const { bucket, rule, units } = debt;
    // Not sent on a lost connection: the client would queue it until it reconnects, past any timeout, and it could land twice.
    if (store.connection.lost()) return UNREACHED;
    if (store.canAdjust(rule)) {
      let word: Decision;
      try {
        word = await withTimeout(store.peek(bucket, rule), peekTimeoutMs);
      } catch {
        return UNREACHED;
      }
      const lost = fallback.suspect(bucket.key) ? fallback.lostBeforeCharge(bucket.key, rule, word, units) : 0;
      try {
        await withTimeout(store.adjust(bucket, rule, units + lost), timeoutMs);
      } catch (error) {
        // Redis refused it (CLUSTERDOWN, READONLY, LOADING: not run): owed again. Else (a timeout may still have run it): forgiven, never sent twice.
        this.options.logger.debug({ err: error, key: bucket.key }, 'could not charge a debt');
        return isErrorReply(error) ? UNREACHED : 0;
      }
      if (lost > 0) this.options.stats.noteRestored(lost);
      return units;
    }
    try {
      const whole = await withTimeout(store.consume(bucket, rule, units), timeoutMs);
      if (whole.allowed) return units;
      const left = Math.min(units, Math.floor(whole.remaining));
      if (left < 1) return 0;
      const part = await withTimeout(store.consume(bucket, rule, left), timeoutMs);
      return part.allowed ? left : 0;
    } catch {
      return 0;
    }
  }
}

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
    // Asked on every decision, and nothing is owed outside an outage's aftermath: no lookup then.
    return this.debts.size > 0 && this.debts.peek(key) !== undefined;
  }

  /** Hands over the debt of `key` and forgets it. */
  take(key: string): Debt | undefined;
  /** Hands over up to `count` debts and forgets them. */
  take(count: number): Debt[];
  take(which: string | number): Debt | undefined | Debt[] {
    if (typeof which === 'string') {
      if (this.debts.size === 0) return undefined;
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
