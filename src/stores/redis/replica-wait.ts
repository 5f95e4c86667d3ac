// Opt-in WAIT (store.wait): an admission Redis decided is returned only once
// `replicas` replicas acknowledged its write, or `timeoutMs` passed. A master
// killed after the script but before WAIT's reply takes the decision with it
// (the call fails, the fallback decides and charges its admission to the
// promoted master), so no admission Redis decided is lost in a failover.
//
// One WAIT per event-loop turn, not per decision: WAIT covers every write the
// connection sent before it, and it blocks the connection while it waits, so
// a WAIT each would serialise decisions one replication round trip apart. It
// is issued in a setImmediate scheduled before the write coalescer's, so it
// leaves in the same socket write as the turn's scripts: one round trip more.
//
// Not on Redis Cluster: WAIT has no key, and ioredis sends a keyless command
// to any node, not the one the scripts went to; per-node WAITs are not built.
import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from './client.js';
import { coalescerOf } from './coalesce.js';

export interface ReplicaWait {
  /** Replicas that must acknowledge a decision's write. */
  replicas: number;
  /** How long WAIT waits for them, ms (below the deadline, or a held replica sends decisions to the fallback). */
  timeoutMs: number;
  /** An admission stood with its write acknowledged by fewer than `replicas` replicas within `timeoutMs`. */
  onUnreplicated?: () => void;
}

export class ReplicaWaiter {
  /** The WAIT of this turn, sent when it ends; undefined once it is sent. */
  private turn: Promise<number> | undefined;
  /** Admissions that stood unreplicated (see ReplicaWait.onUnreplicated). */
  unreplicated = 0;
  private readonly send = (resolve: (acks: number) => void, reject: (error: unknown) => void) => {
    this.turn = undefined;
    const coalescer = coalescerOf(this.client);
    const stream = this.client.stream;
    coalescer.beforeCommand();
    (this.client.call('WAIT', this.wait.replicas, this.wait.timeoutMs) as Promise<number>).then((acks) => {
      // ioredis resends an unanswered command after reconnecting: a WAIT answered by another master did not see these writes.
      if (this.client.stream === stream) resolve(acks);
      else reject(new Error('WAIT was answered on a new connection: the writes it covered went with the old one'));
    }, reject);
    coalescer.afterCommand();
  };

  constructor(
    private readonly client: Redis,
    private readonly wait: ReplicaWait,
  ) {}

  /**
   * Call before sending a decision's script (so the WAIT is scheduled ahead of
   * the coalescer's flush); then pass the script's reply to `settle`.
   */
  acknowledgement(): Promise<number> {
    this.turn ??= new Promise<number>((resolve, reject) => setImmediate(this.send, resolve, reject));
    return this.turn;
  }

  /**
   * The reply, once its write is acknowledged when it admitted: a refusal
   * needs no replica. WAIT failing (the master gone) fails the call.
   */
  async settle<T>(reply: Promise<T>, acknowledged: Promise<number>, admitted: (value: T) => boolean): Promise<T> {
    acknowledged.catch(() => undefined); // the reply's own error is the one reported
    const value = await reply;
    if (!admitted(value)) return value;
    if ((await acknowledged) < this.wait.replicas) {
      this.unreplicated++;
      this.wait.onUnreplicated?.();
    }
    return value;
  }
}

/** The waiter of a store's client, when the operator opted in; Cluster refused (see above). */
export function replicaWaiterFor(client: RedisClient, wait: ReplicaWait | undefined): ReplicaWaiter | undefined {
  if (wait === undefined) return undefined;
  if (isCluster(client)) throw new Error('store.wait (WAIT for replicas) is not supported on Redis Cluster');
  return new ReplicaWaiter(client, wait);
}
