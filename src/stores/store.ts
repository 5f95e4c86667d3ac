// Where bucket state lives. A store runs the policy models atomically: the
// memory store in-process, the Redis store through each model's Lua twin.
// Callers above the store (engine, gateway, admin API, library) never touch Redis.
import type { Decision } from '../core/decision.js';
import type { Rule } from '../core/rule.js';

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

export interface Store {
  readonly kind: 'memory' | 'redis';
  /** Takes `cost` units from the bucket at `key` if the rule allows. Rejects only when the store itself fails. */
  consume(key: string, rule: Rule, cost: number): Promise<Decision>;
  /** Whether one unit would be allowed now; changes nothing. */
  peek(key: string, rule: Rule): Promise<Decision>;
  /** Forgets the bucket: the next call starts full. */
  reset(key: string): Promise<void>;
  inspect(key: string, rule: Rule): Promise<BucketInfo>;
  close(): Promise<void>;
}
