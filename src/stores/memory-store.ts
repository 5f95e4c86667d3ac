// The in-process store: runs the pure models directly. It is the embedded
// default (one instance) and the fallback limiter's engine. JavaScript runs one
// step at a time, so each model call is atomic without locks.
//
// Memory is bounded: at most `maxKeys` buckets. A bucket past its TTL is
// equivalent to no bucket (the models guarantee it), so expired buckets are
// dropped first, then the least recently used ones: random keys cannot grow it.
import type { Decision } from '../core/decision.js';
import type { BucketKey } from '../core/ids.js';
import type { Rule } from '../policies/rule.js';
import { ruleAt } from '../policies/calendar-rule.js';
import { stepAll } from '../policies/compose.js';
import { policyOf } from '../policies/index.js';
import type { PenaltyConfig, PenaltyState } from '../policies/penalty/model.js';
import { stepPenalized } from '../policies/penalty/penalized.js';
import { type Clock, systemClock } from './clock.js';
import { assertPenaltyKey, penaltyKeyOf } from '../core/ids.js';
import type { BucketInfo, GroupReply, Store, StoreCall } from './store.js';

interface Entry {
  /** `penalty` for a penalty box's state, kept beside its bucket under `pb:` + the bucket's key. */
  policy: Rule['policy'] | 'penalty';
  state: unknown;
  expiresAt: number;
}

export interface MemoryStoreOptions {
  /** Most buckets kept at once (default 100,000). */
  maxKeys?: number;
  now?: Clock;
  /** Tag put on decisions: `memory` for the embedded store, `fallback` for the local limiter. */
  source?: Decision['source'];
}

/** How many of the least recently used entries an insert at the cap examines for expiry. */
const EXPIRY_SCAN = 32;

export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  readonly maxKeys: number;
  private readonly entries = new Map<string, Entry>();
  private readonly now: Clock;
  private readonly source: Decision['source'];

  constructor(options: MemoryStoreOptions = {}) {
    this.maxKeys = options.maxKeys ?? 100_000;
    this.now = options.now ?? systemClock;
    this.source = options.source ?? 'memory';
  }

  get size(): number {
    return this.entries.size;
  }

  async consume(bucket: BucketKey, rule: Rule, cost: number): Promise<Decision> {
    return this.consumeSync(bucket.key, rule, cost);
  }

  /** Synchronous form, for callers (the fallback limiter) that must not yield. */
  consumeSync(key: string, given: Rule, cost: number, now = this.now()): Decision {
    const rule = ruleAt(given, now); // a calendar rule gets the window boundaries around now
    const { model } = policyOf(rule);
    const entry = this.live(key, rule, now);
    const result = model.step(entry?.state, now, rule, cost);
    if (result.write) this.put(key, { policy: rule.policy, state: result.state, expiresAt: now + result.ttlMs }, now);
    return { ...result.decision, source: this.source };
  }

  /** Every call in one group: in one process, one step decides them all. */
  groups(calls: readonly StoreCall[]): number[][] {
    return [calls.map((_, i) => i)];
  }

  async consumeAll(calls: readonly StoreCall[]): Promise<GroupReply> {
    return this.consumeAllSync(calls.map((call) => ({ key: call.bucket.key, rule: call.rule, cost: call.cost, shadow: call.shadow })));
  }

  /** Several buckets decided as one (policies/compose.ts): all states written, or none. */
  consumeAllSync(calls: readonly { key: string; rule: Rule; cost: number; shadow: boolean }[], now = this.now()): GroupReply {
    const composed = stepAll(
      calls.map((call) => ({ state: this.live(call.key, call.rule, now)?.state, rule: ruleAt(call.rule, now), cost: call.cost, shadow: call.shadow })),
      now,
    );
    composed.steps.forEach((step, i) => {
      const { key, rule } = calls[i]!;
      if (step.write) this.put(key, { policy: rule.policy, state: step.state, expiresAt: now + step.ttlMs }, now);
    });
    return { admitted: composed.admitted, decisions: composed.steps.map((step) => ({ ...step.decision, source: this.source })) };
  }

  /** A limit with a penalty box (policies/penalty/penalized.ts): a blocked key is refused, its limit untouched. */
  async consumePenalized(bucket: BucketKey, rule: Rule, cost: number, penalty: PenaltyConfig): Promise<Decision> {
    const now = this.now();
    const at = ruleAt(rule, now);
    const boxKey = penaltyKeyOf(bucket); // never a bucket's key (those start rl:)
    const box = this.entries.get(boxKey);
    const penaltyState = box !== undefined && box.expiresAt > now ? (box.state as PenaltyState) : undefined;
    const step = stepPenalized({ policyState: this.live(bucket.key, at, now)?.state, penaltyState, now, rule: at, cost, penalty });
    if (step.policy.write) this.put(bucket.key, { policy: rule.policy, state: step.policy.state, expiresAt: now + step.policy.ttlMs }, now);
    if (step.penalty.write) this.put(boxKey, { policy: 'penalty', state: step.penalty.state, expiresAt: now + step.penalty.ttlMs }, now);
    return { ...step.decision, source: this.source };
  }

  /** The blocks still running, soonest to end first, at most `limit` (keys as on Redis: `pb:{tag}:name`). */
  listBlocked(limit = 1000): { key: string; blockedUntilMs: number }[] {
    const now = this.now();
    const out: { key: string; blockedUntilMs: number }[] = [];
    for (const [key, entry] of this.entries) {
      const until = entry.policy === 'penalty' ? Math.ceil((entry.state as PenaltyState).blockedUntil / 1000) : 0;
      if (until > now) out.push({ key, blockedUntilMs: until });
    }
    return out.sort((a, b) => a.blockedUntilMs - b.blockedUntilMs).slice(0, limit);
  }

  /** Lifts a block and forgives its level; whether there was one. */
  liftBlock(key: string): boolean {
    assertPenaltyKey(key);
    return this.entries.delete(key);
  }

  /** Replaces a bucket's state, e.g. to seed a fallback bucket from the last state Redis reported. */
  seed(key: string, rule: Rule, state: unknown, ttlMs: number, now = this.now()): void {
    this.put(key, { policy: rule.policy, state, expiresAt: now + ttlMs }, now);
  }

  async peek(bucket: BucketKey, rule: Rule): Promise<Decision> {
    return this.peekSync(bucket.key, rule);
  }

  /**
   * The model's adjust, as the Redis store's: takes `delta` units whatever the limit (a debt past empty), or
   * gives them back (negative): a usage-priced limit's settle (usage/settlement.ts), and a request refused by
   * another of its limits giving back what its penalized limit took (limiter/engine/engine.ts).
   */
  async adjust(bucket: BucketKey, given: Rule, delta: number): Promise<void> {
    const now = this.now();
    const rule = ruleAt(given, now);
    const { model } = policyOf(rule);
    if (model.adjust === undefined) throw new Error(`policy ${rule.policy} has no adjust`);
    const result = model.adjust(this.live(bucket.key, rule, now)?.state, now, rule, delta);
    this.put(bucket.key, { policy: rule.policy, state: result.state, expiresAt: now + result.ttlMs }, now);
  }

  peekSync(key: string, rule: Rule): Decision {
    const now = this.now();
    const result = policyOf(rule).model.step(this.live(key, rule, now)?.state, now, ruleAt(rule, now), 0);
    return { ...result.decision, source: this.source };
  }

  async reset(bucket: BucketKey): Promise<void> {
    this.forget(bucket.key);
  }

  /** Drops the bucket kept under `key`. */
  forget(key: string): void {
    this.entries.delete(key);
  }

  async inspect(bucket: BucketKey, rule: Rule): Promise<BucketInfo> {
    return this.inspectSync(bucket.key, rule);
  }

  inspectSync(key: string, rule: Rule): BucketInfo {
    const now = this.now();
    const entry = this.live(key, rule, now);
    const { model } = policyOf(rule);
    return {
      state: entry ? model.serialize(entry.state) : undefined,
      decision: { ...model.step(entry?.state, now, ruleAt(rule, now), 0).decision, source: this.source },
      ttlMs: entry ? Math.max(0, Math.ceil(entry.expiresAt - now)) : undefined,
      location: 'memory',
    };
  }

  async close(): Promise<void> {
    this.entries.clear();
  }

  /** The entry for `key` if it is alive and was made by the same policy (a changed policy starts fresh). */
  private live(key: string, rule: Rule, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now || entry.policy !== rule.policy) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private put(key: string, entry: Entry, now: number): void {
    // Delete first so the Map's insertion order stays least-recently-used first.
    if (!this.entries.delete(key) && this.entries.size >= this.maxKeys) this.evict(now);
    this.entries.set(key, entry);
  }

  private evict(now: number): void {
    let examined = 0;
    for (const [key, entry] of this.entries) {
      if (examined++ >= EXPIRY_SCAN) break;
      if (entry.expiresAt <= now) this.entries.delete(key);
    }
    if (this.entries.size < this.maxKeys) return;
    const oldest = this.entries.keys().next();
    if (!oldest.done) this.entries.delete(oldest.value);
  }
}
