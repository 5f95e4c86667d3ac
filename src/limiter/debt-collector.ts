// Charges the shared store for what the fallback admitted while the breaker
// was open (fallback-debts.ts holds the debts): all of them once the breaker
// closes, a few keys at a time so a recovering Redis is not flooded, and one
// key's debt just before a request on that key reaches Redis again.
import type { Logger } from 'pino';
import type { BucketKey } from '../core/ids.js';
import type { Rule } from '../core/rule.js';
import { withTimeout } from '../core/timeout.js';
import type { SharedStore } from '../stores/store.js';
import { type Debt, FallbackDebts } from './fallback-debts.js';
import type { FallbackLimiter } from './fallback-limiter.js';
import type { LateReplies } from './late-replies.js';
import { fallbackChargedUnits } from './metrics.js';
import type { ChainStats } from './stats.js';

/** What charge() returns when Redis did not answer: the debt is kept. */
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
  peekTimeoutMs: number;
  /** Adjusts a bucket whatever its limit (the same correction as for late replies). */
  adjuster: Pick<LateReplies, 'adjust'>;
  /** Whether a bucket's last word predates the breaker's opening, and what it lost since (last-states.ts). */
  fallback: Pick<FallbackLimiter, 'suspect' | 'lostBeforeCharge'>;
  stats: ChainStats;
  logger: Logger;
}

export class DebtCollector {
  private readonly debts: FallbackDebts;

  constructor(private readonly options: DebtCollectorOptions) {
    this.debts = new FallbackDebts(options.maxKeys);
  }

  /** Counts `units` admitted locally on `bucket` while the breaker was open. */
  owe(bucket: BucketKey, rule: Rule, fingerprint: string, units: number): void {
    this.debts.add(bucket, rule, fingerprint, units);
  }

  /**
   * Redis answers again and this instance still owes the key what its fallback
   * admitted during the outage: the charge is sent before this request's own
   * call, on the same connection, so Redis runs it first and the refilled
   * bucket is never spent twice (a half-open probe included). A bucket whose
   * last word predates the breaker's opening is peeked first (see lostFirst),
   * and the request waits for the charge: the promise; undefined otherwise.
   */
  pay(key: string): Promise<void> | undefined {
    const debt = this.debts.take(key);
    if (debt === undefined) return undefined;
    const peekFirst = this.options.fallback.suspect(key);
    const charged = this.charge(debt, peekFirst, this.options.peekTimeoutMs).then((units) => (units === UNREACHED ? this.reowe(debt) : this.noteCharged(units)));
    return peekFirst ? charged : undefined;
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
      const results = await Promise.all(debts.map((debt) => this.charge(debt, this.options.fallback.suspect(debt.bucket.key), timeoutMs)));
      results.forEach((n, i) => {
        if (n === UNREACHED) unreached.push(debts[i]!);
        else charged += n;
      });
    }
    for (const debt of unreached) this.reowe(debt);
    this.noteCharged(charged);
    if (charged > 0) this.options.logger.info({ keys, units: charged }, 'charged the fallback admissions of the outage to Redis');
  }

  /**
   * A bucket whose last word predates the breaker's opening is peeked before
   * this instance's own admissions are charged to it: charged first, they
   * would hide writes the old master lost (last-states.ts). 0 otherwise.
   */
  private async lostFirst(debt: Debt, timeoutMs: number): Promise<number> {
    const { store, fallback } = this.options;
    try {
      return fallback.lostBeforeCharge(debt.bucket.key, debt.rule, await withTimeout(store.peek(debt.bucket, debt.rule), timeoutMs));
    } catch {
      return UNREACHED;
    }
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
   * returns the units taken, or UNREACHED when Redis did not answer.
   */
  private async charge(debt: Debt, peekFirst: boolean, peekTimeoutMs: number): Promise<number> {
    const { store, timeoutMs, adjuster } = this.options;
    const { bucket, rule, units } = debt;
    // Not sent on a lost connection: the client would queue it until it reconnects, past any timeout, and it could land twice.
    if (store.connection.lost()) return UNREACHED;
    if (store.canAdjust(rule)) {
      // A peek past its deadline: charged without it, and the request's own reply is checked instead (fallback-step.ts).
      const lost = peekFirst ? Math.max(0, await this.lostFirst(debt, peekTimeoutMs)) : 0;
      // Sent and failed (a timeout may still have run it): forgiven, never sent twice.
      if (!(await adjuster.adjust(bucket, rule, units + lost))) return 0;
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
