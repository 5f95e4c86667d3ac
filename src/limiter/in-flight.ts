// Units per bucket sent to the store and not answered yet. They count until
// the store answers, even after the deadline gave up on the call: the
// fallback must not hand them out a second time.
export class InFlight {
  /** Only keys with calls outstanding. */
  private readonly units = new Map<string, number>();

  /** Counts `units` of `key` as pending until `call` settles. */
  add(key: string, units: number, call: Promise<unknown>): void {
    this.take(key, units);
    const settle = () => this.release(key, units);
    call.then(settle, settle);
  }

  /** Counts `units` of `key` as pending until release() (the caller watches the call). */
  take(key: string, units: number): void {
    this.units.set(key, (this.units.get(key) ?? 0) + units);
  }

  release(key: string, units: number): void {
    const left = (this.units.get(key) ?? units) - units;
    if (left > 0) this.units.set(key, left);
    else this.units.delete(key);
  }

  pending(key: string): number {
    return this.units.get(key) ?? 0;
  }
}
