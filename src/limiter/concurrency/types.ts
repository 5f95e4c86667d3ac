// What the concurrency limiter is asked and answers: a request's concurrency
// limits (each a key, its cap and its lease TTL), and an admission that holds
// one lease per limit until the request (or tunnel) ends.

export type StoreDownMode = 'fallback' | 'open' | 'closed';

/** One concurrency limit as it applies to one request. */
export interface SlotLimitCall {
  readonly limitId: string;
  /** Where its leases live: core/ids.ts `slotKey`. */
  readonly key: string;
  /** Most leases open at once on the key, cluster-wide. */
  readonly max: number;
  /** A lease lives this long unless renewed; the holder renews it every third of it. */
  readonly ttlMs: number;
  readonly onStoreDown: StoreDownMode;
}

export interface Admission {
  readonly allowed: boolean;
  /** When refused: the index of the refusing limit. */
  readonly refusedBy: number;
  /** When refused: true if the store was down and the limit says `closed` (503), false if the limit is full (429). */
  readonly unavailable: boolean;
  /** Gives every lease back; safe to call more than once. A no-op for a refused admission. */
  release(): void;
}
