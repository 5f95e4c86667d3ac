// Concurrency leases in process: the pure model run on a bounded map. A key
// whose last lease is released or expired is dropped, so the map holds only
// keys with requests open; at the cap, an expired key is dropped first, then
// the least recently used one (random keys cannot grow it).
import { type SlotState, slotStep } from '../policies/concurrency/model.js';
import { toMicros } from '../policies/model.js';
import { type Clock, systemClock } from './clock.js';
import type { SlotCall, SlotReply, SlotStore } from './slot-store.js';

interface Entry {
  state: SlotState;
  expiresAt: number;
}

export class MemorySlotStore implements SlotStore {
  readonly kind = 'memory' as const;
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxKeys = 100_000,
    private readonly now: Clock = systemClock,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  async acquire(call: SlotCall): Promise<SlotReply> {
    return this.step('acquire', call);
  }

  async release(call: SlotCall): Promise<SlotReply> {
    return this.step('release', call);
  }

  /** Synchronous, for the fallback, which must not yield between deciding and counting. */
  step(op: 'acquire' | 'release', call: SlotCall): SlotReply {
    const now = this.now();
    const entry = this.entries.get(call.key);
    const result = slotStep(entry?.state, toMicros(now), { op, max: call.max, id: call.leaseId, ttlMs: call.ttlMs });
    this.entries.delete(call.key); // re-inserted last: the map's order stays least recently used first
    if (result.inUse > 0) {
      if (this.entries.size >= this.maxKeys) this.evict(now);
      this.entries.set(call.key, { state: result.state, expiresAt: now + result.ttlMs });
    }
    return { held: result.held, inUse: result.inUse };
  }

  private evict(now: number): void {
    let examined = 0;
    for (const [key, entry] of this.entries) {
      if (examined++ >= 32) break;
      if (entry.expiresAt <= now) this.entries.delete(key);
    }
    if (this.entries.size < this.maxKeys) return;
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }
}
