// The negative-cache part of the decision chain: a key the store refused
// stays refused here until its retry time, without a store call; a refusal
// the store makes is recorded on its way back up. A limit with a penalty box
// (policies/penalty/) has only its blocks remembered, briefly (BLOCK_CACHE_MS).
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
    if (decision.source !== 'redis') return decision;
    // A penalized limit's plain refusals must each reach the store, where its box counts them; its blocks are remembered.
    if (plan.penalty === undefined) this.negative.add(plan.bucket.key, plan.fingerprint, cost, decision, this.now());
    else this.negative.addBlock(plan.bucket.key, plan.fingerprint, decision, this.now());
    return decision;
  }
}
