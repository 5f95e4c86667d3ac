// The leases this instance holds, renewed every third of their TTL so that a
// lease outlives its request only if the instance dies: then it expires and
// frees its slot for the rest of the cluster.
import { Counter, Gauge } from 'prom-client';
import type { SlotCall, SlotStore } from '../../stores/slot-store.js';
import { resilienceRegistry } from '../../metrics/registry.js';

const inFlight = new Gauge({
  name: 'sluice_concurrency_in_flight',
  help: 'Leases of each concurrency limit held by this instance now (requests in flight, WebSocket tunnels open)',
  labelNames: ['limit'] as const,
  registers: [resilienceRegistry],
});
const lost = new Counter({
  name: 'sluice_concurrency_leases_lost_total',
  help: "Leases whose renewal found them expired and their slot taken (e.g. Redis unreachable for longer than the lease's TTL)",
  labelNames: ['limit'] as const,
  registers: [resilienceRegistry],
});

export interface HeldLease {
  readonly limitId: string;
  readonly call: SlotCall;
  readonly store: SlotStore;
}

export class HeldLeases {
  /** By TTL: one renewal timer per distinct TTL. */
  private readonly byTtl = new Map<number, { leases: Set<HeldLease>; timer: NodeJS.Timeout }>();

  add(lease: HeldLease): void {
    let group = this.byTtl.get(lease.call.ttlMs);
    if (group === undefined) {
      const leases = new Set<HeldLease>();
      const timer = setInterval(() => this.renew(leases), Math.max(1, Math.floor(lease.call.ttlMs / 3)));
      timer.unref();
      group = { leases, timer };
      this.byTtl.set(lease.call.ttlMs, group);
    }
    group.leases.add(lease);
    inFlight.labels(lease.limitId).inc();
  }

  /** Forgets the lease and gives it back to its store; a failed release leaves it to expire. */
  release(lease: HeldLease): Promise<void> {
    const group = this.byTtl.get(lease.call.ttlMs);
    if (group === undefined || !group.leases.delete(lease)) return Promise.resolve();
    inFlight.labels(lease.limitId).dec();
    if (group.leases.size === 0) {
      clearInterval(group.timer);
      this.byTtl.delete(lease.call.ttlMs);
    }
    return lease.store.release(lease.call).then(
      () => undefined,
      () => undefined,
    );
  }

  /** Releases every lease (the gateway's close). */
  async releaseAll(): Promise<void> {
    const all = [...this.byTtl.values()].flatMap((group) => [...group.leases]);
    await Promise.all(all.map((lease) => this.release(lease)));
  }

  private renew(leases: Set<HeldLease>): void {
    for (const lease of leases) {
      // A failed renewal is retried on the next tick; the lease stays held until the request ends.
      lease.store.acquire(lease.call).then(
        (reply) => {
          if (!reply.held && leases.has(lease)) lost.labels(lease.limitId).inc();
        },
        () => undefined,
      );
    }
  }
}
