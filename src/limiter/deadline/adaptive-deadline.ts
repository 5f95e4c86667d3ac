// The deadline of a Redis call when the operator sets none: derived from how
// long Redis has kept calls waiting lately, in the spirit of TCP's
// retransmission timeout. Its sample is the silence an answered call saw (from
// when it was sent, or the connection's previous answer if later, to its own
// answer), the quantity the deadline judges (deadline.ts). The deadline is
// `factor` times the longest such silence in the last `windowMs`, clamped to
// [floorMs, ceilingMs]: on loopback it stays at the floor (an outage still
// falls back in 5 ms), across zones with 10 ms spikes it rises above them, so
// a spike is waited for instead of decided by the fallback.
//
// Only answers feed it: a call that failed, or that stayed silent past the
// breaker's silence (an outage, the breaker's job), is no sample, nor is a
// silence past the ceiling: the deadline never waits longer than the ceiling,
// however long Redis is silent. A reply after the deadline is a sample (the
// spike it measures is what the deadline must learn). Pure: fed samples and
// times, it reads no clock of its own.

export interface AdaptiveDeadlineOptions {
  /** Never below: what an outage costs a decision on a near Redis, ms. */
  floorMs: number;
  /** Never above, ms; a longer silence is no sample. */
  ceilingMs: number;
  /** Headroom over the longest recent silence. */
  factor: number;
  /** How long a silence is remembered, ms. */
  windowMs: number;
  /** The window's slots: a silence is remembered for windowMs less one slot at least, windowMs at most. */
  slots: number;
}

export const ADAPTIVE_DEADLINE: Readonly<AdaptiveDeadlineOptions> = Object.freeze({
  floorMs: 5,
  ceilingMs: 50,
  factor: 2,
  windowMs: 30_000,
  slots: 6,
});

/** The deadline of the calls to the shared store: fixed (`store.deadlineMs`), or adaptive. */
export interface Deadline {
  /** True when it follows the samples. */
  readonly adaptive: boolean;
  /** The deadline of a call sent at `at`, ms. */
  msAt(at: number): number;
  /** A call answered at `at` after its connection was silent for `silentMs`. */
  answered(silentMs: number, at: number): void;
}

export class FixedDeadline implements Deadline {
  readonly adaptive = false;
  constructor(private readonly ms: number) {}
  msAt(): number {
    return this.ms;
  }
  answered(): void {}
}

export class AdaptiveDeadline implements Deadline {
  readonly adaptive = true;
  private readonly options: AdaptiveDeadlineOptions;
  /** The longest silence of each slot (0: none), a ring; `slot` is the current one. */
  private readonly longest: number[];
  private slot = 0;
  private slotEndsAt: number;
  private readonly slotMs: number;
  private ms: number;

  constructor(startAt: number, options: Partial<AdaptiveDeadlineOptions> = {}) {
    this.options = { ...ADAPTIVE_DEADLINE, ...options };
    const { floorMs, ceilingMs, windowMs, slots, factor } = this.options;
    if (!(floorMs > 0 && ceilingMs >= floorMs && factor >= 1 && slots >= 1 && windowMs >= slots)) throw new RangeError('invalid adaptive deadline options');
    this.longest = new Array<number>(slots).fill(0);
    this.slotMs = windowMs / slots;
    this.slotEndsAt = startAt + this.slotMs;
    this.ms = floorMs;
  }

  msAt(at: number): number {
    if (at >= this.slotEndsAt) this.rotate(at);
    return this.ms;
  }

  answered(silentMs: number, at: number): void {
    const { floorMs, ceilingMs, factor } = this.options;
    // Below floor / factor a silence changes nothing: the hot path stops here on a near Redis.
    if (!(silentMs * factor > floorMs) || silentMs > ceilingMs) return;
    if (at >= this.slotEndsAt) this.rotate(at);
    if (silentMs <= this.longest[this.slot]!) return;
    this.longest[this.slot] = silentMs;
    this.ms = Math.max(this.ms, this.deadlineFor(silentMs));
  }

  /** Starts the slot `at` falls in, forgetting the slots it skipped over and the oldest. */
  private rotate(at: number): void {
    const { slots } = this.options;
    const passed = Math.floor((at - this.slotEndsAt) / this.slotMs) + 1;
    for (let i = 0; i < Math.min(slots, passed); i++) {
      this.slot = (this.slot + 1) % slots;
      this.longest[this.slot] = 0;
    }
    this.slotEndsAt += passed * this.slotMs;
    this.ms = this.deadlineFor(Math.max(...this.longest));
  }

  /** factor × the silence, clamped, rounded up to a tenth of a millisecond. */
  private deadlineFor(silentMs: number): number {
    const { floorMs, ceilingMs, factor } = this.options;
    return Math.min(ceilingMs, Math.max(floorMs, Math.ceil(silentMs * factor * 10) / 10));
  }
}
