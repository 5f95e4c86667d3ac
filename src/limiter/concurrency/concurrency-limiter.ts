// The concurrency limiter: at most N leases open per key, cluster-wide on the
// shared store (one Lua call per limit), each held until its request or tunnel
// ends and renewed meanwhile (held-leases.ts). A request's limits are acquired
// together; if one refuses, the others are given back at once, so a refused
// request holds nothing. When the shared store fails or is late (the store
// deadline), the limit's onStoreDown decides: `fallback` takes a lease in
// process against this instance's 1/N share of the cap, `open` admits without
// a lease, `closed` refuses (503).
import { randomBytes } from 'node:crypto';
import type { MemorySlotStore } from '../../stores/memory-slots.js';
import { systemClock } from '../../stores/clock.js';
import type { SlotCall, SlotReply, SlotStore } from '../../stores/slot-store.js';
import type { StoreConnection } from '../../stores/store.js';
import { CallDeadlines, isDeadlineError } from '../deadline/deadline.js';
import { degradedDecisions, storeFailures } from '../../metrics/registry.js';
import { type HeldLease, HeldLeases } from './held-leases.js';
import type { Admission, SlotLimitCall } from './types.js';

export interface ConcurrencyLimiterOptions {
  /** The shared store (Redis); undefined: `local` is the store. */
  shared?: SlotStore;
  /** The in-process store: the store itself without a shared one, else the fallback's. */
  local: MemorySlotStore;
  /** How many instances share the cap (the fallback's divisor). */
  instances: () => number;
  /** How long the shared store's connection may stay silent during a call before the limit's onStoreDown decides (deadline.ts). */
  deadlineMs: () => number;
  /** The shared store's connection, as the deadline measures it; required with `shared`. */
  connection?: StoreConnection;
  /** False when there is no fallback (the plain engine over Redis): `fallback` reads as `closed`. */
  canFallBack?: boolean;
}

/** After a failed shared call (an error, not a late reply), the shared store is skipped for this long (its calls would only fail again). */
const STORE_DOWN_SKIP_MS = 1000;

interface Taken {
  reply: SlotReply;
  lease?: HeldLease;
}

/** Refused because the store is down and the limit says `closed`. */
const REFUSED: Taken = { reply: { held: false, inUse: 0 } };

export class ConcurrencyLimiter {
  private readonly held = new HeldLeases();
  /** Lease ids: this instance's random prefix and a counter (members of a sorted set, never keys). */
  private readonly prefix = randomBytes(6).toString('hex');
  private seq = 0;
  private skipSharedUntil = 0;

  constructor(private readonly options: ConcurrencyLimiterOptions) {}

  /** Takes one lease per limit, or none. */
  async acquire(calls: readonly SlotLimitCall[]): Promise<Admission> {
    const taken = await Promise.all(calls.map((call) => this.take(call)));
    const refusedBy = taken.findIndex((one) => !one.reply.held);
    const leases = taken.flatMap((one) => (one.lease ? [one.lease] : []));
    if (refusedBy >= 0) {
      for (const lease of leases) void this.held.release(lease);
      return { allowed: false, refusedBy, unavailable: taken[refusedBy] === REFUSED, release: () => undefined };
    }
    let released = false;
    return {
      allowed: true,
      refusedBy: -1,
      unavailable: false,
      release: () => {
        if (released) return;
        released = true;
        for (const lease of leases) void this.held.release(lease);
      },
    };
  }

  /** Stops renewing and gives back every lease held (the gateway's close). */
  close(): Promise<void> {
    return this.held.releaseAll();
  }

  private async take(limit: SlotLimitCall): Promise<Taken> {
    const call: SlotCall = { key: limit.key, max: limit.max, leaseId: `${this.prefix}.${(this.seq++).toString(36)}`, ttlMs: limit.ttlMs };
    const { shared, local } = this.options;
    if (shared === undefined) return this.hold(limit, local, call, local.step('acquire', call));
    const connection = this.options.connection!;
    if (Date.now() >= this.skipSharedUntil && !connection.lost()) {
      try {
        const deadlineMs = this.options.deadlineMs();
        const deadline = new CallDeadlines(connection, connection.channelOf(call.key), deadlineMs, { now: systemClock });
        return this.hold(limit, shared, call, await deadline.bound(shared.acquire(call), deadlineMs));
      } catch (error) {
        // A late acquire may still land: the release sent after it on the same connection undoes it.
        shared.release(call).catch(() => undefined);
        const late = isDeadlineError(error);
        // Late only (a busy machine): this request is decided locally, the next one asks Redis again.
        if (!late) this.skipSharedUntil = Date.now() + STORE_DOWN_SKIP_MS;
        storeFailures.inc({ reason: late ? 'deadline' : 'error' });
      }
    }
    return this.storeDown(limit, call);
  }

  private storeDown(limit: SlotLimitCall, call: SlotCall): Taken {
    const mode = limit.onStoreDown === 'fallback' && this.options.canFallBack === false ? 'closed' : limit.onStoreDown;
    degradedDecisions.inc({ source: mode });
    if (mode === 'closed') return REFUSED;
    if (mode === 'open') return { reply: { held: true, inUse: 0 } }; // admitted without a lease
    const share = { ...call, max: Math.max(1, Math.floor(limit.max / Math.max(1, this.options.instances()))) };
    return this.hold(limit, this.options.local, share, this.options.local.step('acquire', share));
  }

  private hold(limit: SlotLimitCall, store: SlotStore, call: SlotCall, reply: SlotReply): Taken {
    if (!reply.held) return { reply };
    const lease: HeldLease = { limitId: limit.limitId, call, store };
    this.held.add(lease);
    return { reply, lease };
  }
}
