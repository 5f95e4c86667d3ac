// The decision chain over a shared store: steps of one signature (compose.ts),
// in the order a decision flows, for a request of one limit or several:
//
//   leasing (leaser.ts)          a lone leased key spends local units; a hot key starts leasing
//   → negative cache             a key the store refused stays refused until its retry time
//     (negative-cache.ts)        (a limit with a penalty box: only its blocks cached)
//   → refund (store-steps.ts)    a refused request gives back what admitting groups took
//   → fallback (store-steps.ts)  a failed call becomes the rule's onStoreDown decision
//   → groups (store-steps.ts)    one store call per group of the store (hash slot)
//   → store (store-steps.ts)     one group's call under the guard (guard.ts: breaker, deadline)
//
// buildChain builds the parts and composes them for the engine. Above them,
// in the engine (steps/compose.ts RequestChain): the steps added with
// Engine.use (tracing, the dashboard's observer), the penalty step
// (penalty-step.ts), and the outcome that applies shadow mode.
import type { Logger } from 'pino';
import { bucketKey } from '../../core/ids.js';
import type { Rule } from '../../core/rule.js';
import type { Clock } from '../../stores/clock.js';
import type { SharedStore } from '../../stores/store.js';
import { type BreakerOptions, RedisBreaker } from '../deadline/breaker.js';
import { AdaptiveDeadline, FixedDeadline } from '../deadline/deadline.js';
import { StoreGuard } from '../deadline/guard.js';
import { DebtCollector } from '../fallback/debt-collector.js';
import { FallbackLimiter, StoreDown } from '../fallback/fallback.js';
import type { InstanceCount } from '../fallback/instances.js';
import { LateReplies } from '../fallback/late-replies.js';
import { ChainStats } from '../metrics/stats.js';
import { compose, type Decide } from './compose.js';
import { LeasingStep } from './leaser.js';
import { NegativeCache, negativeStep } from './negative-cache.js';
import { fallbackStep, groupsStep, refundStep, storeTerminal } from './store-steps.js';

export interface ChainOptions {
  store: SharedStore;
  /** A fixed deadline, ms; undefined: adaptive (deadline.ts AdaptiveDeadline). */
  deadlineMs?: number | undefined;
  breaker: BreakerOptions;
  hotKey: { autoLeaseRatePerSec: number; batch: number; leaseTtlMs: number };
  negativeCacheSize: number;
  stateCacheSize: number;
  fallbackMaxKeys: number;
  /** Deadline of the calls off the request path (late-reply corrections, outage charges). */
  adminTimeoutMs: number;
  instances: InstanceCount;
  logger: Logger;
  now: Clock;
}

/** The built chain: the composed decision, and the parts the engine also reaches (peek, reset, inspect, health, close). */
export interface DecisionChain {
  /** A request's limits (one or several; a penalized one alone) decided together. */
  decide: Decide;
  leasing: LeasingStep;
  negative: NegativeCache;
  storeDown: StoreDown;
  fallback: FallbackLimiter;
  breaker: RedisBreaker;
  /** The deadline of a store call sent now, ms, fixed or adaptive. */
  deadline: { readonly adaptive: boolean; ms(): number };
  stats: ChainStats;
}

/** What the breaker's own probe asks: a peek (the policy scripts run, nothing is written) of a bucket no tenant has. */
const PROBE_BUCKET = bucketKey('~probe', 'breaker');
const PROBE_RULE: Rule = { policy: 'token_bucket', capacity: 1, refillPerSecond: 1 };

export function buildChain(options: ChainOptions): DecisionChain {
  const { store, logger, now, instances } = options;
  const stats = new ChainStats(logger);
  // `debts` is built below (it needs the fallback); the fallback asks it only once decisions flow.
  const owes = (key: string): boolean => debts.owes(key);
  const fallback = new FallbackLimiter({ maxKeys: options.fallbackMaxKeys, stateCacheSize: options.stateCacheSize, owes, now });
  const late = new LateReplies({ store, timeoutMs: options.adminTimeoutMs, logger, fallback, counts: stats.lateReplies, stats, now });
  const deadline = options.deadlineMs === undefined ? new AdaptiveDeadline(now()) : new FixedDeadline(options.deadlineMs);
  const current = { adaptive: deadline.adaptive, ms: () => deadline.msAt(now()) };
  const debts = new DebtCollector({ store, maxKeys: options.fallbackMaxKeys, timeoutMs: options.adminTimeoutMs, peekTimeoutMs: current.ms, fallback, stats, logger });
  const breaker = new RedisBreaker(
    options.breaker,
    logger,
    {
      onOpen: () => fallback.beginEpisode(),
      onClose: () => {
        fallback.endEpisode();
        void debts.chargeAll();
      },
    },
    () => store.peek(PROBE_BUCKET, PROBE_RULE),
  );
  const guard = new StoreGuard({ store, breaker, deadline, stats, now });
  const storeDown = new StoreDown({ guard, fallback, debts, late, stats, instances, retryAfterMs: options.breaker.resetTimeoutMs });
  const negative = new NegativeCache(options.negativeCacheSize);
  const leasing = new LeasingStep({
    below: storeDown,
    canLease: (rule) => store.canLease(rule),
    negative,
    hotKey: options.hotKey,
    maxKeys: options.stateCacheSize,
    now,
    instances,
    stats,
  });
  const decide = compose(
    leasing.step,
    negativeStep(negative, now),
    refundStep({ late, negative }),
    fallbackStep({ storeDown, fallback, guard, debts, late, stats }),
    groupsStep((calls) => store.groups(calls)),
  )(storeTerminal({ guard, debts, fallback, late }));
  return { decide, leasing, negative, storeDown, fallback, breaker, deadline: current, stats };
}
