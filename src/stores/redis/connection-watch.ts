// When each Redis connection last delivered bytes. The deadline measures Redis
// with it, not the gateway's own event loop: a call only times out when its
// connection has been silent for the whole deadline. Under a burst the loop may
// run timers late, but replies keep arriving, so no call is declared dead while
// Redis is answering (a plain timer let 42-53 through a limit of 20).
import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from './client.js';
import { type Clock, systemClock } from '../clock.js';
import type { StoreConnection } from '../store.js';
import { keySlot } from './key-slot.js';

const ANY = '*';

export class ConnectionWatch implements StoreConnection {
  /** Node key (`host:port`, `*` for a standalone client) → last time bytes arrived. */
  private readonly lastData = new Map<string, number>();
  private readonly watched = new WeakSet<object>();

  /** Until the client is first ready, calls wait in its offline queue behind the handshake (until `graceUntil`). */
  private graceUntil: number;
  /** When the client last became ready (after a reconnect too). */
  private readySince: number;

  /**
   * `connectGraceMs`: a fresh client delivers nothing while it connects and
   * runs its handshake (ready check, script loading is later); calls queued
   * meanwhile wait up to this long for it to become ready before the deadline applies.
   */
  constructor(
    private readonly client: RedisClient,
    connectGraceMs: number,
    private readonly now: Clock = systemClock,
  ) {
    this.graceUntil = client.status === 'ready' ? Number.NEGATIVE_INFINITY : now() + connectGraceMs;
    this.readySince = client.status === 'ready' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
    client.on('ready', () => {
      this.readySince = now();
    });
    client.once('ready', () => {
      this.graceUntil = Number.NEGATIVE_INFINITY;
      this.lastData.set(ANY, now());
    });
    if (isCluster(client)) {
      for (const node of client.nodes('all')) this.watchNode(node, nodeKey(node));
      client.on('+node', (node: Redis) => this.watchNode(node, nodeKey(node)));
    } else {
      this.watchNode(client, ANY);
    }
  }

  /** The connection a call on `key` travels on. */
  channelOf(key: string): string {
    if (!isCluster(this.client)) return ANY;
    return this.client.slots[keySlot(key)]?.[0] ?? ANY;
  }

  /** Last time bytes arrived on `channel` (any node for `*` on a cluster); -Infinity when never. */
  lastDataAt(channel: string): number {
    const last = this.lastData.get(channel) ?? this.lastData.get(ANY) ?? Number.NEGATIVE_INFINITY;
    return Math.max(last, this.graceUntil);
  }

  readyAt(): number {
    return this.readySince;
  }

  /** Reconnecting or closed: Redis is gone (killed, network down), not merely slow. */
  lost(): boolean {
    const status = this.client.status;
    return status === 'reconnecting' || status === 'close' || status === 'end';
  }

  private watchNode(node: Redis, channel: string): void {
    const attach = () => {
      const stream = node.stream;
      if (!stream || this.watched.has(stream)) return;
      this.watched.add(stream);
      let stampPending = false;
      const stamp = () => {
        stampPending = false;
        const now = this.now();
        this.lastData.set(channel, now);
        if (channel !== ANY) this.lastData.set(ANY, now);
      };
      stream.on('data', () => {
        stamp();
        // Stamp again once the replies are processed (after their promise chains
        // ran): a busy gateway processing a large read is not a silent Redis.
        // ioredis has read the replies by now (its listener comes first): with
        // none still awaited on this connection, no deadline can be judged
        // against this read, and the extra turn is spared (one per request
        // when paced).
        if (!stampPending && node.commandQueue.length > 0) {
          stampPending = true;
          setImmediate(stamp);
        }
      });
    };
    attach();
    node.on('connect', attach);
  }
}

function nodeKey(node: Redis): string {
  return `${node.options.host ?? '127.0.0.1'}:${node.options.port ?? 6379}`;
}
