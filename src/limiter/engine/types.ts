// The engine's contract and the shapes it decides: a request's limits
// (LimitCall, what the library, the adapters and the gateway hand it) and
// their outcome (LimitsDecision). The engines are in engine.ts (StoreEngine)
// and resilient-engine.ts.
import type { Decision } from '../../core/decision.js';
import type { Rule } from '../../core/rule.js';
import type { PenaltyConfig } from '../../policies/penalty/model.js';
import type { BlockedKey, BucketInfo } from '../../stores/store.js';
import type { EngineCounters } from '../metrics/stats.js';
import type { Step } from '../steps/compose.js';

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

/**
 * One limit of a request as the engine is handed it (the library's and the
 * adapters' shape): its bucket's ids (`rl:{tag}:name`), rule, cost and box.
 * The engine plans it once into a call (steps/compose.ts Call: the bucket's
 * key built, the rule scaled), which is what every step below sees.
 */
export interface LimitCall {
  readonly tag: string;
  readonly name: string;
  readonly rule: Rule;
  readonly cost: number;
  /** The limit's penalty box (policies/penalty/): decided with it in one store call, before the other limits (steps/penalty-step.ts); absent = none. */
  readonly penalty?: PenaltyConfig | undefined;
}

/** The limits of one request, decided together. */
export interface LimitsDecision {
  /** Whether every limit admitted the request. */
  allowed: boolean;
  /** One decision per call, in the calls' order. */
  decisions: Decision[];
  /** The limit the response describes: the one that refused, else the one closest to exhaustion. */
  governing: number;
  /** Each limit's own decision before shadow mode (a shadow limit's would-be refusal, for the dashboard). */
  enforced?: Decision[];
  /**
   * Whether each limit was consulted; absent = all were. A request refused by
   * the negative cache consults only the refusing limit: the others' decisions
   * are placeholders (not charged, their state unknown) and headers leave them out.
   */
  consulted?: boolean[];
}

export interface Engine {
  /** Decides one request of `tenant` on `route`. Never rejects for a store failure. */
  decide(tenant: string, route: string, rule: Rule, cost?: number): Promise<Decision>;
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
  peek(tenant: string, route: string, rule: Rule): Promise<Decision>;
  /**
   * Takes `delta` more units from a bucket already charged, whatever its limit
   * (a debt past empty, repaid from the refill), or gives them back (negative):
   * a reservation settled (src/usage/). Rejects when the store did not take it.
   */
  adjust?(tenant: string, route: string, rule: Rule, delta: number): Promise<void>;
  reset(tenant: string, route: string, rule: Rule): Promise<void>;
  inspect(tenant: string, route: string, rule: Rule): Promise<BucketInfo>;
  /** The running penalty blocks across the store, soonest to end first, at most `limit` (the admin API's list). */
  listBlocked(limit?: number): Promise<BlockedKey[]>;
  /** Lifts the block of a listed penalty key and forgives its level; whether there was one. This engine forgets what it cached of it. */
  liftBlock(key: string): Promise<boolean>;
  health(): EngineHealth;
  /** What the engine counted (decisions, store calls, failures…): for tests, benchmarks and the dashboard. */
  counters(): EngineCounters;
  close(): Promise<void>;
}

