// The engine's contract. The shapes it decides, a request's limits
// (LimitCall, what the library, the adapters and the gateway hand it) and
// their outcome (LimitsDecision), belong to the chain (steps/compose.ts) and
// are re-exported here. The engines are in engine.ts (StoreEngine)
// and resilient-engine.ts.
import type { Decision } from '../../core/decision.js';
import type { Bucket } from '../../core/ids.js';
import type { Rule } from '../../policies/rule.js';
import type { BlockedKey, BucketInfo } from '../../stores/store.js';
import type { EngineCounters } from '../metrics/stats.js';
import type { LimitCall, LimitsDecision, Step } from '../steps/compose.js';

export type { LimitCall, LimitsDecision } from '../steps/compose.js';

export type EngineMode = 'memory' | 'redis' | 'fallback';

export interface EngineHealth {
  /** Which runtime decides right now. */
  mode: EngineMode;
  /** Whether the shared store answers (always true for the memory store). */
  storeReachable: boolean;
  detail?: string;
  /** While the store is unreachable: why, when known (a refused password, a failed TLS handshake, the last failed call's error). */
  reason?: string;
  /** Over Redis: what a decision waits for it now, ms (store.deadlineMs, or the adaptive deadline). */
  deadlineMs?: number;
}

export interface Engine {
  /** Decides one request on `bucket` (a key bucketKey built is used as is). Never rejects for a store failure. */
  decide(bucket: Bucket, rule: Rule, cost?: number): Promise<Decision>;
  /**
   * Decides a request's limits together (the chain of steps/compose.ts):
   * admitted only when every limit admits, and a refused request is charged
   * to no bucket. Never rejects for a store failure.
   */
  decideAll(calls: readonly LimitCall[]): Promise<LimitsDecision>;
  /**
   * Adds a step on top of the engine's decision chain, outermost (the
   * dashboard's observer, tracing's span): it sees every request's calls and
   * their decisions as enforced, before shadow mode. Absent on an engine
   * without a chain: such an engine is not observed.
   */
  use?(step: Step): void;
  peek(bucket: Bucket, rule: Rule): Promise<Decision>;
  /**
   * Takes `delta` more units from a bucket already charged, whatever its limit
   * (a debt past empty, repaid from the refill), or gives them back (negative):
   * a reservation settled (src/usage/). Rejects when the store did not take it.
   */
  adjust?(bucket: Bucket, rule: Rule, delta: number): Promise<void>;
  reset(bucket: Bucket, rule: Rule): Promise<void>;
  inspect(bucket: Bucket, rule: Rule): Promise<BucketInfo>;
  /** The running penalty blocks across the store, soonest to end first, at most `limit` (the admin API's list). */
  listBlocked(limit?: number): Promise<BlockedKey[]>;
  /** Lifts the block of a listed penalty key and forgives its level; whether there was one. This engine forgets what it cached of it. */
  liftBlock(key: string): Promise<boolean>;
  health(): EngineHealth;
  /** What the engine counted (decisions, store calls, failures…): for tests, benchmarks and the dashboard. */
  counters(): EngineCounters;
  close(): Promise<void>;
}

