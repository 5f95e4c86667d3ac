// The shared store: every decision is one atomic Lua script call on Redis
// (standalone, Sentinel or Cluster, through ioredis). Time comes from Redis
// TIME inside the script, so gateway clocks never matter.
//
// Besides decisions it leases batches, adjusts buckets and watches its
// connection for the resilience layer, which never talks to Redis itself.
//
// Concurrency: ioredis writes each command to the socket as soon as it is
// issued, so many concurrent decisions share one connection's pipeline.
// Auto-pipelining is left off: coalesce.ts batches the script calls itself, with a cap.
import type { Redis } from 'ioredis';
import type { Decision } from '../core/decision.js';
import type { BucketKey } from '../core/ids.js';
import type { Rule } from '../policies/rule.js';
import { withTimeout } from '../core/timeout.js';
import type { PenaltyConfig } from '../policies/penalty/model.js';
import { type Clock, systemClock } from './clock.js';
import { canAdjust, runAdjust } from './redis/adjust.js';
import { isCluster } from './redis/client.js';
import { ConnectionProblem, type StoreProblem } from './redis/connection-problem.js';
import { ConnectionWatch } from './redis/connection-watch.js';
import { keySlot } from './redis/key-slot.js';
import { runAll } from './redis/multi-script.js';
import { type BlockedKey, liftRedisBlock, listBlocked, runPenalized } from './redis/penalty-script.js';
import { type ReplicaWait, type ReplicaWaiter, replicaWaiterFor } from './redis/replica-wait.js';
import { isLeasable, preloadScripts, type RedisClient, redisKeyOf, runDecision, runLease, runScript } from './redis/scripts.js';
import { scrubErrorsOf } from './redis/scrub-secrets.js';
import type { BucketInfo, GroupReply, LeaseReply, SharedStore, StoreCall } from './store.js';

export interface RedisStoreOptions {
  /**
   * How long calls on a fresh client wait for its first bytes before the
   * deadline applies. Given: the connection is watched from now on; else from
   * the first use of `connection`, with 1000 ms (a plain store pays nothing).
   */
  connectGraceMs?: number;
  now?: Clock;
  /** Opt-in WAIT after each admission's script (store.wait, replica-wait.ts); not on a Cluster. */
  wait?: ReplicaWait;
}

/** How long close() waits for QUIT's reply before cutting the connection. */
const CLOSE_TIMEOUT_MS = 1000;

export class RedisStore implements SharedStore {
  readonly kind = 'redis' as const;
  private watch: ConnectionWatch | undefined;
  private readonly now: Clock;
  /** Why connecting fails, from the client's errors: for /readyz and the error log. */
  readonly problem: ConnectionProblem;
  /** Present when the operator opted into WAIT. */
  readonly waiter: ReplicaWaiter | undefined;

  constructor(
    readonly client: RedisClient,
    options: RedisStoreOptions = {},
  ) {
    preloadScripts(client);
    // A client handed in by a library user too: its errors must not carry the password either.
    scrubErrorsOf(client);
    this.problem = new ConnectionProblem(client);
    this.now = options.now ?? systemClock;
    this.waiter = replicaWaiterFor(client, options.wait);
    if (options.connectGraceMs !== undefined) this.watch = new ConnectionWatch(client, options.connectGraceMs, this.now);
  }

  /** When each connection last delivered bytes: what the deadline measures. */
  get connection(): ConnectionWatch {
    this.watch ??= new ConnectionWatch(this.client, 1000, this.now);
    return this.watch;
  }

  consume(bucket: BucketKey, rule: Rule, cost: number): Promise<Decision> {
    if (!this.waiter) return runDecision(this.client, bucket, rule, cost);
    const acknowledged = this.waiter.acknowledgement();
    return this.waiter.settle(runDecision(this.client, bucket, rule, cost), acknowledged, (decision) => decision.allowed);
  }

  /** One group per hash slot: a Cluster runs one script on one slot's keys only (a standalone server too, so both count alike). */
  groups(calls: readonly StoreCall[]): number[][] {
    const bySlot = new Map<number, number[]>();
    calls.forEach((call, i) => {
      const slot = keySlot(redisKeyOf(call.rule.policy, call.bucket));
      const group = bySlot.get(slot);
      if (group) group.push(i);
      else bySlot.set(slot, [i]);
    });
    return [...bySlot.values()];
  }

  consumeAll(calls: readonly StoreCall[]): Promise<GroupReply> {
    if (!this.waiter) return runAll(this.client, calls);
    const acknowledged = this.waiter.acknowledgement();
    return this.waiter.settle(runAll(this.client, calls), acknowledged, (reply) => reply.admitted);
  }

  /** A limit with a penalty box, in one script call (redis/penalty-script.ts). */
  consumePenalized(bucket: BucketKey, rule: Rule, cost: number, penalty: PenaltyConfig): Promise<Decision> {
    return runPenalized(this.client, { bucket, rule, cost, penalty });
  }

  /** The blocks still running across the cluster (the bounded index, redis/penalty-script.ts). */
  listBlocked(limit?: number): Promise<BlockedKey[]> {
    return listBlocked(this.client, this.now(), limit);
  }

  /** Lifts a block and forgives its level; whether there was one. */
  liftBlock(key: string): Promise<boolean> {
    return liftRedisBlock(this.client, key);
  }

  peek(bucket: BucketKey, rule: Rule): Promise<Decision> {
    return runDecision(this.client, bucket, rule, 0);
  }

  connectionProblem(): StoreProblem | undefined {
    return this.problem.problem;
  }

  canLease(rule: Rule): boolean {
    return isLeasable(rule);
  }

  lease(bucket: BucketKey, rule: Rule, need: number, want: number): Promise<LeaseReply> {
    if (!this.waiter) return runLease(this.client, bucket, rule, need, want);
    const acknowledged = this.waiter.acknowledgement();
    return this.waiter.settle(runLease(this.client, bucket, rule, need, want), acknowledged, (reply) => reply.granted > 0);
  }

  canAdjust(rule: Rule): boolean {
    return canAdjust(rule);
  }

  async adjust(bucket: BucketKey, rule: Rule, delta: number): Promise<void> {
    await runAdjust(this.client, bucket, rule, delta);
  }

  async reset(bucket: BucketKey): Promise<void> {
    // The bucket is a field of its hash, or (sliding log) a key of its own.
    await Promise.all([this.client.hdel(bucket.hash, bucket.field), this.client.del(bucket.key)]);
  }

  async inspect(bucket: BucketKey, rule: Rule): Promise<BucketInfo> {
    const [reply, ttl] = await Promise.all([runScript(this.client, bucket, rule, 0), this.client.pttl(redisKeyOf(rule.policy, bucket))]);
    return {
      state: ttl >= 0 || ttl === -1 ? reply.state : undefined,
      decision: reply.decision,
      ttlMs: ttl >= 0 ? ttl : undefined,
      location: await this.locationOf(bucket.key),
    };
  }

  /** Quits politely; a server that does not answer (paused, gone) within a second is cut off, so close() always ends. */
  async close(): Promise<void> {
    await withTimeout(this.client.quit(), CLOSE_TIMEOUT_MS).catch(() => this.client.disconnect());
  }

  private async locationOf(key: string): Promise<string> {
    if (isCluster(this.client)) {
      const slot = await this.client.cluster('KEYSLOT', key);
      return `redis cluster slot ${slot}`;
    }
    const options = (this.client as Redis).options;
    return `redis ${options.host ?? '127.0.0.1'}:${options.port ?? 6379}`;
  }
}
