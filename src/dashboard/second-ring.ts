// Decisions per second of one route over the last RING_SECONDS seconds: three
// counters per slot, reused as the seconds go by, so memory is fixed.

export const RING_SECONDS = 60;

/** The outcomes counted: disjoint, so allowed + refused + shadowRefused = decisions. */
export type Outcome = 'allowed' | 'refused' | 'shadowRefused';

export interface Series {
  allowed: number[];
  refused: number[];
  /** Admitted by a shadow rule that would have refused. */
  shadowRefused: number[];
}

export class SecondRing {
  private readonly stamps = new Float64Array(RING_SECONDS).fill(-1);
  private readonly allowed = new Uint32Array(RING_SECONDS);
  private readonly refused = new Uint32Array(RING_SECONDS);
  private readonly shadowRefused = new Uint32Array(RING_SECONDS);

  add(second: number, outcome: Outcome): void {
    const slot = second % RING_SECONDS;
    if (this.stamps[slot] !== second) {
      this.stamps[slot] = second;
      this.allowed[slot] = 0;
      this.refused[slot] = 0;
      this.shadowRefused[slot] = 0;
    }
    this[outcome][slot]!++;
  }

  /** The last `seconds` seconds ending at `endSecond` (included), oldest first. */
  series(endSecond: number, seconds = RING_SECONDS): Series {
    const out: Series = { allowed: [], refused: [], shadowRefused: [] };
    for (let s = endSecond - seconds + 1; s <= endSecond; s++) {
      const slot = ((s % RING_SECONDS) + RING_SECONDS) % RING_SECONDS;
      const live = this.stamps[slot] === s;
      out.allowed.push(live ? this.allowed[slot]! : 0);
      out.refused.push(live ? this.refused[slot]! : 0);
      out.shadowRefused.push(live ? this.shadowRefused[slot]! : 0);
    }
    return out;
  }
}
