// A shared store for the fast tests of the limiter's logic under a late or
// paused store: it runs MemoryStore's pure models (the ones the Lua twins are
// proven equal to) and answers as Redis would, in order, but on command:
// paused, no call runs and nothing answers (SIGSTOP); resumed, the held calls
// run in the order sent and answer at once. Not a mock of Redis's protocol:
// what is about Redis itself keeps a real redis-server.
import { keySlot } from '../../src/stores/redis/key-slot.js';
import { redisKeyOf } from '../../src/stores/redis/scripts.js';
import type { Decision } from '../../src/core/decision.js';
import type { BucketKey } from '../../src/core/ids.js';
import { capacityOf, type Rule } from '../../src/policies/rule.js';
import { policyOf } from '../../src/policies/index.js';
import { type Clock, systemClock } from '../../src/stores/clock.js';
import { MemoryStore } from '../../src/stores/memory-store.js';
import type { PenaltyConfig } from '../../src/policies/penalty/model.js';
import type { BlockedKey, BucketInfo, GroupReply, LeaseReply, SharedStore, StoreCall, StoreConnection } from '../../src/stores/store.js';

export class FakeSharedStore implements SharedStore {
  readonly kind = 'redis' as const;
  /** The buckets, as Redis would hold them (decisions say `redis`). */
  readonly memory: MemoryStore;
  private readonly now: Clock;
  private held: (() => void)[] | undefined;
  /** Keeps the process alive while calls are held, as a real socket would (the deadline timers are unref'd). */
  private keepAlive: NodeJS.Timeout | undefined;
  private lastReplyAt = Number.NEGATIVE_INFINITY;
  /** Calls run (not held), for assertions. */
  calls = 0;
  /** Calls run per bucket key (a group call counts on its first bucket). */
  readonly callsOn = new Map<string, number>();

  readonly connection: StoreConnection = {
    channelOf: () => 'fake',
    lastDataAt: () => this.lastReplyAt,
    lost: () => false,
  };

  constructor(options: { now?: Clock } = {}) {
    this.now = options.now ?? systemClock;
    this.memory = new MemoryStore({ now: this.now, source: 'redis' });
  }

  /** From now on no call runs and nothing answers, until resume(). */
  pause(): void {
    this.held ??= [];
    this.keepAlive ??= setInterval(() => undefined, 1000);
  }

  /** Runs the held calls in the order they were sent, and answers them. */
  resume(): void {
    const held = this.held ?? [];
    this.held = undefined;
    clearInterval(this.keepAlive);
    this.keepAlive = undefined;
    for (const run of held) run();
  }

  get paused(): boolean {
    return this.held !== undefined;
  }

  consume(bucket: BucketKey, rule: Rule, cost: number): Promise<Decision> {
    return this.run(bucket.key, () => this.memory.consumeSync(bucket.key, rule, cost));
  }

  /** As the Redis store groups them: one group per hash slot. */
  groups(calls: readonly StoreCall[]): number[][] {
    const bySlot = new Map<number, number[]>();
    calls.forEach((call, i) => {
      const slot = keySlot(redisKeyOf(call.rule.policy, call.bucket));
      bySlot.set(slot, [...(bySlot.get(slot) ?? []), i]);
    });
    return [...bySlot.values()];
  }

  consumeAll(calls: readonly StoreCall[]): Promise<GroupReply> {
    return this.run(calls[0]?.bucket.key ?? '', () => this.memory.consumeAllSync(calls.map((call) => ({ key: call.bucket.key, rule: call.rule, cost: call.cost, shadow: call.shadow }))));
  }

  consumePenalized(bucket: BucketKey, rule: Rule, cost: number, penalty: PenaltyConfig): Promise<Decision> {
    return this.run(bucket.key, () => this.memory.consumePenalized(bucket, rule, cost, penalty)).then((decision) => decision);
  }

  listBlocked(limit?: number): BlockedKey[] {
    return this.memory.listBlocked(limit);
  }

  liftBlock(key: string): boolean {
    return this.memory.liftBlock(key);
  }

  peek(bucket: BucketKey, rule: Rule): Promise<Decision> {
    return this.run(bucket.key, () => this.memory.peekSync(bucket.key, rule));
  }

  canLease(rule: Rule): boolean {
    return rule.policy !== 'leaky_bucket';
  }

  lease(bucket: BucketKey, rule: Rule, need: number, want: number): Promise<LeaseReply> {
    const ask = Math.min(Math.max(need, want), capacityOf(rule));
    return this.run(bucket.key, () => {
      const decision = this.memory.consumeSync(bucket.key, rule, ask);
      return { granted: decision.allowed ? ask : 0, remaining: decision.remaining, resetAfterMs: decision.resetAfterMs, retryAfterMs: decision.retryAfterMs };
    });
  }

  canAdjust(rule: Rule): boolean {
    return policyOf(rule).model.adjust !== undefined;
  }

  adjust(bucket: BucketKey, rule: Rule, delta: number): Promise<void> {
    return this.run(bucket.key, () => {
      const { model } = policyOf(rule);
      const now = this.now();
      const text = this.memory.inspectSync(bucket.key, rule).state;
      const result = model.adjust!(text === undefined ? undefined : model.deserialize(text), now, rule, delta);
      this.memory.seed(bucket.key, rule, result.state, Math.max(1, result.ttlMs), now);
    });
  }

  reset(bucket: BucketKey): Promise<void> {
    return this.run(bucket.key, () => this.memory.forget(bucket.key));
  }

  inspect(bucket: BucketKey, rule: Rule): Promise<BucketInfo> {
    return this.run(bucket.key, () => ({ ...this.memory.inspectSync(bucket.key, rule), location: 'fake' }));
  }

  close(): Promise<void> {
    this.resume();
    return this.memory.close();
  }

  /** `work` now, or once resumed; its answer on a later turn, as a reply read from a socket. */
  private run<T>(key: string, work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const go = () => {
        this.calls++;
        this.callsOn.set(key, (this.callsOn.get(key) ?? 0) + 1);
        try {
          const value = work();
          setImmediate(() => {
            this.lastReplyAt = this.now();
            resolve(value);
          });
        } catch (error) {
          reject(error);
        }
      };
      if (this.held) this.held.push(go);
      else go();
    });
  }
}
