// An engine for the shaping tests: it holds the gateway's decisions until
// `count` requests wait, then asks the real engine for all of them in one go,
// so the store decides them microseconds apart however slowly a loaded machine
// delivers the requests. Each decision is recorded with the time the gateway
// got it (performance.now()).
import type { Decision } from '../../src/core/decision.js';
import type { Bucket } from '../../src/core/ids.js';
import type { Rule } from '../../src/policies/rule.js';
import type { Engine } from '../../src/limiter/engine/engine.js';

export interface RecordedDecision {
  decision: Decision;
  /** performance.now() when the decision reached the gateway. */
  at: number;
}

export interface GatedEngine extends Engine {
  /** Decisions in the order they resolved. */
  readonly recorded: RecordedDecision[];
  /** performance.now() when the gate opened. */
  readonly openedAt: number;
}

export function gatedEngine(inner: Engine, count: number): GatedEngine {
  const waiting: Array<() => void> = [];
  const recorded: RecordedDecision[] = [];
  let openedAt = Number.NaN;
  const gate = (): Promise<void> => {
    if (!Number.isNaN(openedAt)) return Promise.resolve();
    return new Promise((resolve) => {
      waiting.push(resolve);
      if (waiting.length < count) return;
      openedAt = performance.now();
      for (const release of waiting.splice(0)) release();
    });
  };
  const engine: GatedEngine = {
    recorded,
    get openedAt() {
      return openedAt;
    },
    async decide(bucket: Bucket, rule: Rule, cost?: number) {
      await gate();
      const decision = await inner.decide(bucket, rule, cost);
      recorded.push({ decision, at: performance.now() });
      return decision;
    },
    peek: (bucket, rule) => inner.peek(bucket, rule),
    reset: (bucket, rule) => inner.reset(bucket, rule),
    inspect: (bucket, rule) => inner.inspect(bucket, rule),
    listBlocked: (limit) => inner.listBlocked(limit),
    liftBlock: (key) => inner.liftBlock(key),
    health: () => inner.health(),
    counters: () => inner.counters(),
    close: () => inner.close(),
    async decideAll(calls) {
      await gate();
      const outcome = await inner.decideAll(calls);
      for (const decision of outcome.decisions) recorded.push({ decision, at: performance.now() });
      return outcome;
    },
  };
  return engine;
}
