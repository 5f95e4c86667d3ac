// The negative-cache part of the decision chain: a key the store refused
// stays refused here until its retry time, without a store call; a refusal
// the store makes is recorded on its way back up.
import type { Decision } from '../core/decision.js';
import type { Clock } from '../stores/clock.js';
import type { DecisionStep } from './plan.js';
import type { NegativeCache } from './negative-cache.js';
import type { Plan } from './plan.js';

export class NegativeStep implements DecisionStep {
  constructor(
    private readonly negative: NegativeCache,
    private readonly next: DecisionStep,
    private readonly now: Clock,
  ) {}

  async decide(plan: Plan, cost: number): Promise<Decision> {
    const cached = this.negative.get(plan.bucket.key, plan.fingerprint, cost, this.now());
    if (cached) return cached;
    const decision = await this.next.decide(plan, cost);
    // Only the store's own refusals: a fallback, `open` or `closed` decision says nothing of the shared bucket.
    if (decision.source === 'redis') this.negative.add(plan.bucket.key, plan.fingerprint, cost, decision, this.now());
    return decision;
  }
}
