// An engine that watches the decisions of another: counts per route and second,
// the most refused tenants, degraded decisions and the decision latency, for the
// dashboard and /metrics. The gateway sees the same decisions as without it.
import type { Decision } from '../core/decision.js';
import type { Rule } from '../core/rule.js';
import { applyShadow, type Engine, type EngineCounters, type EngineHealth, type LimitCall, type LimitsDecision } from '../limiter/engine/engine.js';
import type { BlockedKey, BucketInfo } from '../stores/store.js';
import { DecisionStats } from './decision-stats.js';
import { currentProbe, observeLatency, setEngineProbe } from './metrics.js';

/** Shadow rules are decided as enforced rules and shadowed here, so the refusal they would make is seen. */
const enforcedTwins = new WeakMap<Rule, Rule>();
function enforced(rule: Rule): Rule {
  let twin = enforcedTwins.get(rule);
  if (!twin) {
    twin = { ...rule, shadow: false };
    enforcedTwins.set(rule, twin);
  }
  return twin;
}

export class ObservedEngine implements Engine {
  readonly stats: DecisionStats;
  private readonly probe = { mode: () => this.health().mode, instances: () => this.instances() };

  /** `now`: tests only; by default the wall clock is read off the decision's own timing. */
  constructor(
    readonly inner: Engine,
    private readonly now?: () => number,
  ) {
    this.stats = new DecisionStats(now ? now() : Date.now());
    setEngineProbe(this.probe);
  }

  // One `then` rather than an async function: one promise less per decision on the hot path.
  decide(tenant: string, route: string, rule: Rule, cost?: number): Promise<Decision> {
    const started = performance.now();
    const shadow = rule.shadow === true;
    return this.inner.decide(tenant, route, shadow ? enforced(rule) : rule, cost).then((decision) => {
      const ended = performance.now();
      observeLatency(decision.source, (ended - started) / 1000);
      this.stats.record(tenant, route, decision, shadow, this.now ? this.now() : performance.timeOrigin + ended);
      return shadow ? applyShadow(rule, decision) : decision;
    });
  }

  /** Every limit's decision is recorded; a shadow limit's as the refusal it would have made. */
  decideAll(calls: readonly LimitCall[]): Promise<LimitsDecision> {
    // A lone shadow limit's outcome carries no `enforced` list: decided as enforced, recorded, then shadowed here.
    if (calls.length === 1 && calls[0]!.penalty === undefined && calls[0]!.rule.shadow === true) return this.decideLoneShadow(calls[0]!);
    const started = performance.now();
    return this.inner.decideAll(calls).then((outcome) => {
      const ended = performance.now();
      const at = this.now ? this.now() : performance.timeOrigin + ended;
      calls.forEach((call, i) => {
        const decision = outcome.enforced?.[i] ?? outcome.decisions[i]!;
        observeLatency(decision.source, (ended - started) / 1000);
        this.stats.record(call.tag, call.name, decision, call.rule.shadow === true, at);
      });
      return outcome;
    });
  }

  private decideLoneShadow(call: LimitCall): Promise<LimitsDecision> {
    return this.decide(call.tag, call.name, call.rule, call.cost).then((decision) => ({ allowed: decision.allowed, decisions: [decision], governing: 0 }));
  }

  peek(tenant: string, route: string, rule: Rule): Promise<Decision> {
    return this.inner.peek(tenant, route, rule);
  }

  reset(tenant: string, route: string, rule: Rule): Promise<void> {
    return this.inner.reset(tenant, route, rule);
  }

  adjust(tenant: string, route: string, rule: Rule, delta: number): Promise<void> {
    if (this.inner.adjust === undefined) return Promise.reject(new Error('the engine cannot adjust a bucket'));
    return this.inner.adjust(tenant, route, rule, delta);
  }

  inspect(tenant: string, route: string, rule: Rule): Promise<BucketInfo> {
    return this.inner.inspect(tenant, route, rule);
  }

  listBlocked(limit?: number): Promise<BlockedKey[]> {
    return this.inner.listBlocked(limit);
  }

  liftBlock(key: string): Promise<boolean> {
    return this.inner.liftBlock(key);
  }

  health(): EngineHealth {
    return this.inner.health();
  }

  counters(): EngineCounters {
    return this.inner.counters();
  }

  /** The live instance count the fallback divides by (1 without Redis), as the engine counts it. */
  instances(): number {
    return this.inner.counters().instances;
  }

  close(): Promise<void> {
    if (currentProbe() === this.probe) setEngineProbe(undefined);
    return this.inner.close();
  }
}
