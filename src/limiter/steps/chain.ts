// The decision chain over a shared store, in the order a decision flows:
//
//   leasing (leaser.ts)         a leased key spends local units; a hot key starts leasing
//   → negative cache            a key the store refused stays refused until its retry time
//                               (a limit with a penalty box enters here: no leasing, only its blocks cached)
//   → fallback (fallback.ts)    a failed call becomes the rule's onStoreDown decision
//   → guard (guard.ts)          the breaker and the deadline around the call
//   → store                     the shared store (RedisStore)
//
// Each part takes the next one (or the parts it needs) as an object, so each
// can be built and tested alone; buildChain wires them for the engine.
import type { Logger } from 'pino';
import { bucketKey } from '../../core/ids.js';
import type { Rule } from '../../core/rule.js';
import type { Clock } from '../../stores/clock.js';
import type { SharedStore } from '../../stores/store.js';
import { AdaptiveDeadline, FixedDeadline } from '../deadline/adaptive-deadline.js';
import { type BreakerOptions, RedisBreaker } from '../deadline/breaker.js';
import { DebtCollector } from '../fallback/debt-collector.js';
import { FallbackLimiter } from '../fallback/fallback.js';
import { FallbackStep } from '../fallback/fallback.js';
import { StoreGuard } from '../deadline/guard.js';
import type { InstanceCount } from '../fallback/instances.js';
import { LateReplies } from '../fallback/late-replies.js';
import { LeasingStep } from './leaser.js';
import { MultiStep } from './multi-step.js';
import { NegativeCache } from '../caches/negative-cache.js';
import { NegativeStep } from '../caches/negative-cache.js';
import type { DecisionStep } from '../engine/plan.js';
import { ChainStats } from '../metrics/stats.js';

export type { DecisionStep } from '../engine/plan.js';

export interface ChainOptions {
  store: SharedStore;
  /** A fixed deadline, ms; undefined: adaptive (adaptive-deadline.ts). */
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

/** The built chain: its head, and the parts the engine also reaches (peek, reset, inspect, health, close). */
export interface DecisionChain {
  head: DecisionStep;
  /** A request's several limits (multi-step.ts): negative cache, store per slot group, fallback; no leasing. */
  multi: MultiStep;
  leasing: LeasingStep;
  /** A limit with a penalty box: the negative cache (its blocks only), then the fallback and the store; no leasing. */
  penalized: DecisionStep;
  negative: NegativeCache;
  fallbackStep: FallbackStep;
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
  const fallbackStep = new FallbackStep({ guard, fallback, debts, late, stats, instances, retryAfterMs: options.breaker.resetTimeoutMs });
  const negative = new NegativeCache(options.negativeCacheSize);
  const negativeStep = new NegativeStep(negative, fallbackStep, now);
  const leasing = new LeasingStep({
    below: fallbackStep,
    next: negativeStep,
    canLease: (rule) => store.canLease(rule),
    negative,
    hotKey: options.hotKey,
    maxKeys: options.stateCacheSize,
    now,
    instances,
    stats,
  });
  const multi = new MultiStep({ groups: (calls) => store.groups(calls), guard, fallbackStep, fallback, debts, late, negative, stats, now });
  return { head: leasing, multi, leasing, penalized: negativeStep, negative, fallbackStep, fallback, breaker, deadline: current, stats };
}
