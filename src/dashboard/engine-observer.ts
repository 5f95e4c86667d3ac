// The dashboard's observer: a step on top of the engine's decision chain
// (Engine.use, steps/compose.ts) that watches every request's limits: counts
// per route and second, the most refused tenants, degraded decisions and the
// decision latency, for the dashboard and /metrics. It sees each decision as
// enforced, so a shadow limit's would-be refusal is counted as one; the
// outcome above it applies shadow mode, and the gateway sees the same
// decisions as without it.
import type { Engine } from '../limiter/engine/engine.js';
import { isShadow, type Step } from '../limiter/steps/compose.js';
import { DecisionStats } from './decision-stats.js';
import { currentProbe, observeLatency, setEngineProbe } from './metrics.js';

/** The recording step alone, over any `next`: what the observer adds to an engine. */
export function observerStep(stats: DecisionStats, now?: () => number): Step {
  // One `then` on the reply rather than an async function: one promise less per decision on the hot path.
  return (next) => (calls) => {
    const started = performance.now();
    return next(calls).then((reply) => {
      const ended = performance.now();
      const at = now ? now() : performance.timeOrigin + ended;
      const seconds = (ended - started) / 1000;
      for (let i = 0; i < calls.length; i++) {
        const call = calls[i]!;
        const decision = reply.decisions[i]!;
        observeLatency(decision.source, seconds);
        stats.record(call.plan.bucket.tag, call.plan.bucket.name, decision, isShadow(call), at);
      }
      return reply;
    });
  };
}

/** An engine watched: its observer step added to its chain, the stats it fills, and the probe /metrics reads. */
export class EngineObserver {
  readonly stats: DecisionStats;
  /** Whether the engine took the step (an engine without a chain, `Engine.use` absent, is not observed). */
  readonly observing: boolean;
  private readonly probe = { mode: () => this.engine.health().mode, instances: () => this.instances() };

  /** `now`: tests only; by default the wall clock is read off the decision's own timing. */
  constructor(
    readonly engine: Engine,
    now?: () => number,
  ) {
    this.stats = new DecisionStats(now ? now() : Date.now());
    this.observing = engine.use !== undefined;
    engine.use?.(observerStep(this.stats, now));
    setEngineProbe(this.probe);
  }

  /** The live instance count the fallback divides by (1 without Redis), as the engine counts it. */
  instances(): number {
    return this.engine.counters().instances;
  }

  /** /metrics stops reading this engine (the dashboard closes). */
  detach(): void {
    if (currentProbe() === this.probe) setEngineProbe(undefined);
  }
}
