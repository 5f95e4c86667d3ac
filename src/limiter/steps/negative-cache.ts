// "Over limit until T" for refused keys: a flood of refused requests costs no
// Redis call until T. Bounded (LRU) and matched on the rule's fingerprint, so a
// raised limit takes effect at once instead of after T.
//
// The chain's step around it (negativeStep, below): a key the store refused stays refused here until
// its retry time, without a store call; the store's refusals are recorded on
// their way back up. A limit with a penalty box (policies/penalty/) has only
// its blocks remembered, briefly (BLOCK_CACHE_MS).
//
// Several limits: any (enforced) limit known refused refuses the request at
// once, the others not consulted; a shadow limit's refusal cannot refuse the
// request, so it is not looked up (a lone shadow limit is: its would-be
// refusal is what the request reports).
import type { Decision } from '../../core/decision.js';
import { capacityOf } from '../../policies/rule.js';
import type { Clock } from '../../stores/clock.js';
import type { Plan } from '../engine/plan.js';
import { type Call, isShadow, type Reply, replyOfOne, type Step } from './compose.js';
import { BoundedLru } from '../../core/lru.js';

/**
 * How long a penalty block is remembered at a time: a block lifted by an
 * admin (on any instance) reaches every instance's cache within this, while a
 * blocked key hammering the gateway costs at most one store call per this long.
 */
export const BLOCK_CACHE_MS = 1000;

interface Refusal {
  /** A penalty block's end (local time), when the refusal is one: the decision carries it. */
  blockEnd?: number;
  blockedUntilMs?: number;
  fingerprint: string;
  /** Local time until which the key stays refused. */
  until: number;
  /** Smallest cost known to be refused: a cheaper request may still fit. */
  cost: number;
  limit: number;
}

export class NegativeCache {
  private readonly entries: BoundedLru<string, Refusal>;

  constructor(maxKeys: number) {
    this.entries = new BoundedLru(maxKeys);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The cached refusal for `cost` on `key` under the rule with `fingerprint`, if still valid at `now`. */
  get(key: string, fingerprint: string, cost: number, now: number): Decision | undefined {
    const refusal = this.entries.peek(key);
    if (refusal === undefined) return undefined;
    if (refusal.until <= now) {
      this.entries.delete(key);
      return undefined;
    }
    if (refusal.fingerprint !== fingerprint || cost < refusal.cost) return undefined;
    if (refusal.blockEnd !== undefined) {
      const retryAfterMs = Math.ceil(refusal.blockEnd - now);
      return { allowed: false, remaining: 0, limit: refusal.limit, resetAfterMs: retryAfterMs, retryAfterMs, delayMs: 0, source: 'cache', blockedUntilMs: refusal.blockedUntilMs! };
    }
    const retryAfterMs = Math.ceil(refusal.until - now);
    return { allowed: false, remaining: 0, limit: refusal.limit, resetAfterMs: retryAfterMs, retryAfterMs, delayMs: 0, source: 'cache' };
  }

  /** Records a refusal the store made at `now`. */
  add(key: string, fingerprint: string, cost: number, decision: Decision, now: number): void {
    if (decision.allowed || decision.retryAfterMs <= 0) return;
    this.entries.set(key, { fingerprint, until: now + decision.retryAfterMs, cost, limit: decision.limit });
  }

  /**
   * Records a penalty block the store reported at `now` (a decision with
   * `blockedUntilMs`), for at most BLOCK_CACHE_MS: any cost is refused meanwhile.
   */
  addBlock(key: string, fingerprint: string, decision: Decision, now: number): void {
    if (decision.allowed || decision.blockedUntilMs === undefined || decision.retryAfterMs <= 0) return;
    const blockEnd = now + decision.retryAfterMs;
    this.entries.set(key, { fingerprint, until: Math.min(blockEnd, now + BLOCK_CACHE_MS), cost: 0, limit: decision.limit, blockEnd, blockedUntilMs: decision.blockedUntilMs });
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}

export function negativeStep(negative: NegativeCache, now: Clock): Step {
  return (next) => (calls) => {
    // Nothing refused is remembered (the usual case): no lookup, no clock read.
    const cached = negative.size === 0 ? undefined : knownRefused(negative, calls, now());
    if (cached) return Promise.resolve(cached);
    return next(calls).then((reply) => {
      record(negative, calls, reply, now);
      return reply;
    });
  };
}

function knownRefused(negative: NegativeCache, calls: readonly Call[], now: number): Reply | undefined {
  if (calls.length === 1) {
    const call = calls[0]!;
    const hit = negative.get(call.plan.bucket.key, call.plan.fingerprint, call.cost, now);
    return hit ? replyOfOne(call, hit) : undefined;
  }
  for (let i = 0; i < calls.length; i++) {
    const call = calls[i]!;
    if (isShadow(call)) continue;
    const hit = negative.get(call.plan.bucket.key, call.plan.fingerprint, call.cost, now);
    if (hit) return { admitted: false, decisions: calls.map((other, j) => (j === i ? hit : notConsulted(other.plan))), consulted: calls.map((_, j) => j === i) };
  }
  return undefined;
}

/** Only the store's own refusals: a fallback, `open` or `closed` decision says nothing of the shared bucket. The clock is read once a refusal is there to record. */
function record(negative: NegativeCache, calls: readonly Call[], reply: Reply, now: Clock): void {
  let at: number | undefined;
  for (let i = 0; i < calls.length; i++) {
    const decision = reply.decisions[i]!;
    if (decision.allowed || decision.source !== 'redis') continue;
    at ??= now();
    const { plan, cost } = calls[i]!;
    // A penalized limit's plain refusals must each reach the store, where its box counts them; its blocks are remembered.
    if (plan.penalty === undefined) negative.add(plan.bucket.key, plan.fingerprint, cost, decision, at);
    else negative.addBlock(plan.bucket.key, plan.fingerprint, decision, at);
  }
}

/** A limit not consulted because another was known refused: not charged, its state unknown (`consulted` says so). */
function notConsulted(plan: Plan): Decision {
  const limit = capacityOf(plan.rule);
  return { allowed: true, remaining: limit, limit, resetAfterMs: 0, retryAfterMs: 0, delayMs: 0, source: 'cache' };
}
