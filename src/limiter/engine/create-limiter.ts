// The library API, in the spirit of Symfony's RateLimiterFactory:
//   const limiter = createLimiter({ id: 'api', policy: 'token_bucket', capacity: 100, refillPerSecond: 10 }, engine);
//   const d = await limiter.consume(userId);   // d.allowed, d.remaining, d.retryAfterMs …
// Keys are `rl:{<key>}:<id>`; a key that is not an id is hashed (keyId).
// It decides through an engine: the one given (createEngine's, resilient on
// Redis), or a plain StoreEngine over the store given (default: memory).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Decision } from '../../core/decision.js';
import { SluiceError } from '../../core/errors.js';
import { assertValidId, type Bucket, keyId } from '../../core/ids.js';
import { parseRule, type Rule } from '../../policies/rule.js';
import { MemoryStore } from '../../stores/memory-store.js';
import type { BucketInfo, Store } from '../../stores/store.js';
import { type Engine, StoreEngine } from './engine.js';

export type LimiterOptions = Rule & {
  /** Names this limiter; part of every key, so two limiters never share buckets. Default `default`. */
  id?: string;
};

export interface Reservation {
  decision: Decision;
  /** Milliseconds to wait: the shaping delay when accepted, the retry time when refused. */
  waitMs: number;
  /** Resolves after `waitMs`. */
  wait(signal?: AbortSignal): Promise<void>;
  /**
   * Reserve, then settle (docs/usage-limits.md): the reservation took `cost`
   * units as an estimate; `actual` is what was used. The difference is given
   * back, or charged whatever is left (a debt, repaid from the refill). A
   * refused reservation took nothing: settling it does nothing. Settle once.
   */
  settle(actual: number): Promise<void>;
}

export interface RateLimiter {
  readonly id: string;
  readonly rule: Rule;
  /** Takes `cost` units for `key` if the rule allows. */
  consume(key: string, cost?: number): Promise<Decision>;
  /** Whether one unit would be allowed now, without taking it. */
  peek(key: string): Promise<Decision>;
  /** Forgets `key`'s state: its next call starts full. */
  reset(key: string): Promise<void>;
  /** Consumes and tells how long to wait before acting (traffic shaping: the leaky bucket's delay). */
  reserve(key: string, cost?: number): Promise<Reservation>;
  /** Consumes and, when accepted with a delay, resolves once the delay has passed. */
  wait(key: string, cost?: number, signal?: AbortSignal): Promise<Decision>;
  inspect(key: string): Promise<BucketInfo>;
  /** Closes the engine or store the limiter decides with (its Redis connection): a script can then exit. */
  close(): Promise<void>;
}

const isEngine = (value: Store | Engine): value is Engine => typeof (value as Engine).decide === 'function';

export function createLimiter(options: LimiterOptions, storeOrEngine: Store | Engine = new MemoryStore()): RateLimiter {
  const { id = 'default', ...ruleInput } = options;
  assertValidId(id, 'id');
  const rule = parseRule(ruleInput);
  const engine = isEngine(storeOrEngine) ? storeOrEngine : new StoreEngine(storeOrEngine);
  /** The caller's key's bucket under this limiter: `rl:{<key>}:<id>`. */
  const bucketOf = (key: string): Bucket => ({ tag: keyId(key), name: id });

  const limiter: RateLimiter = {
    id,
    rule,
    consume: async (key, cost = 1) => engine.decide(bucketOf(key), rule, cost),
    peek: async (key) => engine.peek(bucketOf(key), rule),
    reset: async (key) => engine.reset(bucketOf(key), rule),
    inspect: async (key) => engine.inspect(bucketOf(key), rule),
    close: () => engine.close(),
    async reserve(key, cost = 1) {
      const decision = await limiter.consume(key, cost);
      const waitMs = decision.allowed ? decision.delayMs : decision.retryAfterMs;
      let settled = false;
      const settle = async (actual: number) => {
        if (!Number.isFinite(actual) || actual < 0) throw new SluiceError('ERR_COST_INVALID', 'must be a number of units, at least 0', 'actual');
        if (settled) throw new SluiceError('ERR_COST_INVALID', 'this reservation is already settled', 'actual');
        settled = true;
        // Nothing was taken from the store: refused, a shadow rule's would-be refusal, or decided without Redis (open, the local fallback).
        if (!decision.allowed || decision.shadowRefused || decision.source === 'open' || decision.source === 'fallback' || engine.adjust === undefined) return;
        await engine.adjust(bucketOf(key), rule, Math.ceil(actual) - cost);
      };
      return { decision, waitMs, wait: (signal) => (waitMs > 0 ? sleep(waitMs, undefined, { signal }) : Promise.resolve()), settle };
    },
    async wait(key, cost = 1, signal) {
      const decision = await limiter.consume(key, cost);
      if (decision.allowed && decision.delayMs > 0) await sleep(decision.delayMs, undefined, { signal });
      return decision;
    },
  };
  return limiter;
}
