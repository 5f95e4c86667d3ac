// Counters of one engine, for tests, benchmarks and the dashboard; the
// Prometheus series are in metrics.ts. Every part of the decision chain
// counts into one ChainStats; Engine.counters() hands out a copy.
import type { Logger } from 'pino';
import type { Decision, DecisionSource } from '../../core/decision.js';
import { isOpenBreakerError } from '../deadline/breaker.js';
import { isDeadlineError } from '../deadline/deadline.js';
import { failoverRestoredUnits, storeFailures } from '../../metrics/registry.js';

export type LateOutcome = 'agreed' | 'refunded' | 'charged' | 'uncorrected' | 'delay_mismatch' | 'lost';

export interface EngineCounters {
  decisions: number;
  /** Calls that reached the store (decisions, leases, peeks). */
  storeCalls: number;
  /** Lease calls made (hot keys and rules with `lease`). */
  leaseCalls: number;
  deadlineTimeouts: number;
  storeErrors: number;
  /** Calls refused by the open breaker without touching the store. */
  breakerRejects: number;
  /** Units the fallback admitted while the breaker was open, charged to the store after it closed. */
  chargedUnits: number;
  /** Units a bucket came back from a breaker episode without (writes lost in a failover), charged back (last-states.ts). */
  restoredUnits: number;
  /** Replies that came after the deadline, by what reconciling them with the local decision did (late-replies.ts). */
  lateReplies: Record<LateOutcome, number>;
  bySource: Partial<Record<DecisionSource, number>>;
  /** The divisor of the fallback limit (1 without a shared store). */
  instances: number;
}

export class ChainStats {
  decisions = 0;
  storeCalls = 0;
  leaseCalls = 0;
  deadlineTimeouts = 0;
  storeErrors = 0;
  breakerRejects = 0;
  chargedUnits = 0;
  restoredUnits = 0;
  readonly lateReplies: Record<LateOutcome, number> = { agreed: 0, refunded: 0, charged: 0, uncorrected: 0, delay_mismatch: 0, lost: 0 };
  readonly bySource: Partial<Record<DecisionSource, number>> = {};

  constructor(private readonly logger?: Logger) {}

  noteDecision(decision: Decision): void {
    this.decisions++;
    this.bySource[decision.source] = (this.bySource[decision.source] ?? 0) + 1;
  }

  /** `units` a bucket came back from a breaker episode without, charged back. */
  noteRestored(units: number): void {
    this.restoredUnits += units;
    failoverRestoredUnits.inc(units);
  }

  /** Counts a failed store call by its kind: refused by the open breaker, past the deadline, or an error. */
  noteFailure(error: unknown): void {
    if (isOpenBreakerError(error)) {
      this.breakerRejects++;
      storeFailures.inc({ reason: 'breaker_open' });
    } else if (isDeadlineError(error)) {
      this.deadlineTimeouts++;
      storeFailures.inc({ reason: 'deadline' });
    } else {
      this.storeErrors++;
      storeFailures.inc({ reason: 'error' });
      this.logger?.debug({ err: error }, 'Redis call failed');
    }
  }

  /** A copy, so a reader cannot change the counts. */
  snapshot(instances: number): EngineCounters {
    const { decisions, storeCalls, leaseCalls, deadlineTimeouts, storeErrors, breakerRejects, chargedUnits, restoredUnits } = this;
    return {
      decisions,
      storeCalls,
      leaseCalls,
      deadlineTimeouts,
      storeErrors,
      breakerRejects,
      chargedUnits,
      restoredUnits,
      lateReplies: { ...this.lateReplies },
      bySource: { ...this.bySource },
      instances,
    };
  }
}
