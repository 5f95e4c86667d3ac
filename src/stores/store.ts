// Where bucket state lives. A store runs the policy models atomically: the
// memory store in-process, the Redis store through each model's Lua twin.
// Callers above the store (engine, gateway, admin API, library) never touch Redis.
import type { Decision } from '../core/decision.js';
import type { BucketKey } from '../core/ids.js';
import type { Rule } from '../policies/rule.js';
import type { PenaltyConfig } from '../policies/penalty/model.js';

/**
 * One limit of a multi-limit call, the store's own contract (stores know no
 * plan): its bucket, the rule as enforced there (scaled), its cost, and
 * whether it is a shadow limit, which the atomic call must not let refuse.
 */
export interface StoreCall {
  readonly bucket: BucketKey;
  readonly rule: Rule;
  readonly cost: number;
  readonly shadow: boolean;
}

/** What a multi-limit call decided: admitted (every state written) or not (none), and each limit's decision. */
export interface GroupReply {
  admitted: boolean;
  decisions: Decision[];
  /** Whether each limit was consulted; absent = all were (a negative-cache refusal consults only the refusing one). */
  consulted?: boolean[];
}

export interface BucketInfo {
  /** The policy's state in its serialized form (e.g. token bucket: microsecond it is full). */
  state: string | undefined;
  /** What a peek decides now: remaining units, reset and retry times. */
  decision: Decision;
  /** Milliseconds until the key expires; undefined when there is no key. */
  ttlMs: number | undefined;
  /** Where the bucket lives, e.g. `memory` or `redis 127.0.0.1:6379`. */
  location: string;
}

/** A running block as the store lists it. */
export interface BlockedKey {
  /** The penalty key, `pb:{tag}:name` (the bucket's key with another prefix). */
  key: string;
  /** When the block ends, ms since the epoch. */
  blockedUntilMs: number;
}

export interface Store {
  readonly kind: 'memory' | 'redis';
  /** Takes `cost` units from `bucket` if the rule allows. Rejects only when the store itself fails. */
  consume(bucket: BucketKey, rule: Rule, cost: number): Promise<Decision>;
  /**
   * Decides several buckets as one: every state written when every enforced
   * limit admits, else none. Redis: the buckets must share one hash slot.
   */
  consumeAll(calls: readonly StoreCall[]): Promise<GroupReply>;
  /**
   * The calls' indexes in the groups consumeAll can decide as one: every call
   * in one group on the memory store, one group per hash slot on Redis (a
   * Cluster cannot run one script over several slots).
   */
  groups(calls: readonly StoreCall[]): number[][];
  /**
   * A limit with a penalty box, decided with it in one atomic step
   * (policies/penalty/penalized.ts): a blocked key is refused before its limit
   * is consulted; a refusal of the limit is counted by the box.
   */
  consumePenalized(bucket: BucketKey, rule: Rule, cost: number, penalty: PenaltyConfig): Promise<Decision>;
  /** The blocks still running (penalty keys `pb:{tag}:name`), soonest to end first, at most `limit`. */
  listBlocked(limit?: number): BlockedKey[] | Promise<BlockedKey[]>;
  /** Lifts a block and forgives its level; whether there was one. Refuses any key but a penalty key. */
  liftBlock(key: string): boolean | Promise<boolean>;
  /** Whether one unit would be allowed now; changes nothing. */
  peek(bucket: BucketKey, rule: Rule): Promise<Decision>;
  /** Forgets the bucket: the next call starts full. */
  reset(bucket: BucketKey): Promise<void>;
  inspect(bucket: BucketKey, rule: Rule): Promise<BucketInfo>;
  /** Takes `delta` units whatever the limit, a debt past empty (negative: gives them back); absent where the store cannot (the memory store, SharedStore and the Redis store have it). */
  adjust?(bucket: BucketKey, rule: Rule, delta: number): Promise<void>;
  close(): Promise<void>;
}

/** What a lease took from a shared bucket (stores/redis/scripts.ts runLease). */
export interface LeaseReply {
  /** Units taken (0 when refused: fewer than the batch were available). */
  granted: number;
  /** Units left in the shared bucket after the lease. */
  remaining: number;
  resetAfterMs: number;
  /** When refused: milliseconds until the batch is available. */
  retryAfterMs: number;
}

/** The connection behind a shared store, as the deadline measures it. */
export interface StoreConnection {
  /** The connection (node) a call on `key` travels on. */
  channelOf(key: string): string;
  /** Last local time bytes arrived on `channel`; -Infinity when never. */
  lastDataAt(channel: string): number;
  /** Lost (reconnecting or closed), not merely slow. */
  lost(): boolean;
  /** When the client last became ready (connected, handshake done); a call sent before waited for that, not for Redis. */
  readyAt?(): number;
}

/**
 * A store shared by every instance over the network (Redis): what the
 * resilience layer needs besides decisions, so it never talks to Redis itself.
 */
export interface SharedStore extends Store {
  readonly connection: StoreConnection;
  /** Whether the rule's policy can lease batches (shaping cannot). */
  canLease(rule: Rule): boolean;
  /** Takes max(`need`, `want`) units (at most the capacity) in one call, or none. */
  lease(bucket: BucketKey, rule: Rule, need: number, want: number): Promise<LeaseReply>;
  /** Whether the rule's policy has an adjust (the time-based ones). */
  canAdjust(rule: Rule): boolean;
  /** Takes `delta` units whatever the limit (negative: gives them back). */
  adjust(bucket: BucketKey, rule: Rule, delta: number): Promise<void>;
  /** Why the connection fails, named (refused password, TLS handshake…); undefined while it works. */
  connectionProblem?(): { reason: string; neverConnected: boolean } | undefined;
}
