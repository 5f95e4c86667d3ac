// Where concurrency leases live (the model: policies/concurrency/model.ts).
// The memory store runs the model in process; the Redis store runs its Lua
// twin (redis/slots.ts). The concurrency limiter (limiter/concurrency-limiter.ts)
// calls them; nothing above it talks to Redis.

/** One lease on one key: at most `max` open on the key, this one `leaseId`, expiring `ttlMs` after each acquire. */
export interface SlotCall {
  /** The key's Redis key (core/ids.ts `slotKey`): `rl:{tag}:name:cc`. */
  readonly key: string;
  readonly max: number;
  readonly leaseId: string;
  readonly ttlMs: number;
}

export interface SlotReply {
  /** Whether the lease is held now (acquired or renewed). */
  held: boolean;
  /** Leases open on the key after the call. */
  inUse: number;
}

export interface SlotStore {
  readonly kind: 'memory' | 'redis';
  /** Takes the lease if it is held already (a renewal) or fewer than `max` are open. Rejects only when the store fails. */
  acquire(call: SlotCall): Promise<SlotReply>;
  /** Gives the lease back; an unknown or expired lease is no error. */
  release(call: SlotCall): Promise<SlotReply>;
}
