// Units per bucket sent to the store and not answered yet. They count until
// the store answers, even after the deadline gave up on the call: the
// fallback must not hand them out a second time.
//
// The calls on one bucket travel on one connection and Redis runs them in the
// order sent, so a late call's decision in Redis follows exactly the units
// sent before it: `take` returns the call's place (the units sent before it),
// and `aheadOf` the units of those still unanswered. The calls sent after it
// run after it in Redis too, and do not weigh on its local decision.

interface Flow {
  /** Units sent since the bucket last had nothing in flight. */
  sent: number;
  /** Of those, units answered (or failed). */
  answered: number;
}

export class InFlight {
  /** Only keys with calls outstanding. */
  private readonly flows = new Map<string, Flow>();

  /** Counts `units` of `key` as pending until `call` settles. */
  add(key: string, units: number, call: Promise<unknown>): void {
    this.take(key, units);
    const settle = () => this.release(key, units);
    call.then(settle, settle);
  }

  /** Counts `units` of `key` as pending until release() (the caller watches the call); returns the call's place for aheadOf. */
  take(key: string, units: number): number {
    let flow = this.flows.get(key);
    if (flow === undefined) {
      flow = { sent: 0, answered: 0 };
      this.flows.set(key, flow);
    }
    const place = flow.sent;
    flow.sent += units;
    return place;
  }

  release(key: string, units: number): void {
    const flow = this.flows.get(key);
    if (flow === undefined) return;
    flow.answered += units;
    if (flow.answered >= flow.sent) this.flows.delete(key);
  }

  /** Buckets with units in flight (none once every call is answered). */
  get size(): number {
    return this.flows.size;
  }

  pending(key: string): number {
    const flow = this.flows.get(key);
    return flow === undefined ? 0 : flow.sent - flow.answered;
  }

  /** The units sent before the call at `place` (from take, the call still unanswered) and not answered yet. */
  aheadOf(key: string, place: number): number {
    const flow = this.flows.get(key);
    return flow === undefined ? 0 : Math.max(0, place - flow.answered);
  }
}
