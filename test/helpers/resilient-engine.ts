// Shared pieces of the resilience tests: a silent logger, engines over a real
// redis-server, and polling with a deadline (never a timed assertion).
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import type { Decision } from '../../src/core/decision.js';
import { parseRule, type Rule } from '../../src/policies/rule.js';
import { type CreateEngineOptions, createResilientEngine } from '../../src/engine-factory/create-engine.js';
import type { Plan } from '../../src/limiter/engine/plan.js';
import { buildChain, type DecisionChain, type ResilientEngine } from '../../src/limiter/engine/resilient-engine.js';
import { InstanceCount } from '../../src/limiter/fallback/instances.js';
import type { Reply } from '../../src/limiter/steps/compose.js';
import { systemClock } from '../../src/stores/clock.js';

export const silent = pino({ level: 'silent' });

export function resilientEngine(options: CreateEngineOptions & Required<Pick<CreateEngineOptions, 'redis'>>): ResilientEngine {
  return createResilientEngine({ logger: silent, ...options });
}

type ChainOptions = Parameters<typeof buildChain>[0];

/** One instance's decision chain over `store`, small caches and no leasing: a test sets only the deadline and the breaker it is about. */
export function chainOver(store: ChainOptions['store'], options: Pick<ChainOptions, 'deadlineMs' | 'breaker'>): DecisionChain {
  return buildChain({
    store,
    ...options,
    hotKey: { autoLeaseRatePerSec: 0, batch: 10, leaseTtlMs: 1000 },
    negativeCacheSize: 100,
    stateCacheSize: 100,
    fallbackMaxKeys: 100,
    adminTimeoutMs: 1000,
    instances: new InstanceCount(1, { count: 1 }),
    logger: silent,
    now: systemClock,
  });
}

export const bucket = (capacity: number, refillPerSecond: number, extra: Record<string, unknown> = {}): Rule =>
  parseRule({ policy: 'token_bucket', capacity, refillPerSecond, ...extra });

export function allowedCount(decisions: Decision[]): number {
  return decisions.filter((d) => d.allowed).length;
}

export function bySource(decisions: Decision[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const d of decisions) counts[d.source] = (counts[d.source] ?? 0) + 1;
  return counts;
}

/** Polls `check` until it holds; throws after `timeoutMs`. */
export async function eventually(check: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(25);
  }
  throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
}

/** `n` concurrent decisions, all issued before any can complete. */
export function burst(engine: ResilientEngine, n: number, rule: Rule, tenant = 'shop-a', route = 'orders'): Promise<Decision[]> {
  return Promise.all(Array.from({ length: n }, () => engine.decide({ tag: tenant, name: route }, rule)));
}

/** One limit through the chain: its decision. */
export async function decideOn(chain: DecisionChain, plan: Plan, cost = 1): Promise<Decision> {
  return (await chain.decide([{ plan, cost }])).decisions[0]!;
}

/** A request's several limits through the chain, decided together. */
export function decideAllOn(chain: DecisionChain, plans: readonly Plan[], costs: readonly number[]): Promise<Reply> {
  return chain.decide(plans.map((plan, i) => ({ plan, cost: costs[i]! })));
}
