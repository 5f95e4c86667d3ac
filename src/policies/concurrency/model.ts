// The concurrency limit as a pure function: at most `max` leases open per key.
// A lease is an id with an expiry; its holder renews it while its request or
// tunnel stays open and releases it at the end, so a lease of an instance that
// died simply expires. Acquiring an id already held renews it, and renewing a
// lease that was lost (expired) takes it again if there is room: one operation.
// The state is at most `max` leases, ordered as Redis orders a sorted set (by
// expiry, then id), which is what the Lua twin (concurrency.lua) keeps.

/** One open lease: its id and the microsecond it expires. */
export interface SlotLease {
  readonly id: string;
  readonly expiresUs: number;
}

/** Open leases, ordered by expiry then id; never more than the limit's `max`. */
export type SlotState = readonly SlotLease[];

export type SlotOp = 'acquire' | 'release';

export interface SlotStep {
  state: SlotState;
  /** Whether the lease is held after the call (always false after a release). */
  held: boolean;
  /** Leases open after the call. */
  inUse: number;
  /** How long the state matters (its last lease's expiry); 0 = nothing left to keep. */
  ttlMs: number;
}

const byExpiry = (a: SlotLease, b: SlotLease): number => a.expiresUs - b.expiresUs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** One call on a slot set: `op` for lease `id`, at most `max` leases held, each living `ttlMs`. */
export interface SlotCall {
  readonly op: SlotOp;
  readonly max: number;
  readonly id: string;
  readonly ttlMs: number;
}

/** Applies `op` for lease `id` at `nowUs`: expired leases are dropped first, then the lease is added or renewed (if held or below `max`) or removed. */
export function slotStep(state: SlotState | undefined, nowUs: number, { op, max, id, ttlMs }: SlotCall): SlotStep {
  const live = (state ?? []).filter((lease) => lease.expiresUs > nowUs);
  const others = live.filter((lease) => lease.id !== id);
  let next: SlotLease[] = others;
  let held = false;
  if (op === 'acquire' && (others.length < live.length || live.length < max)) {
    next = [...others, { id, expiresUs: nowUs + ttlMs * 1000 }].sort(byExpiry);
    held = true;
  }
  const last = next[next.length - 1];
  return { state: next, held, inUse: next.length, ttlMs: last === undefined ? 0 : Math.max(1, Math.ceil((last.expiresUs - nowUs) / 1000)) };
}

/** The state as the twin returns it: `id@expiry` joined by `,`, in order. */
export function serializeSlots(state: SlotState): string {
  return state.map((lease) => `${lease.id}@${lease.expiresUs}`).join(',');
}
