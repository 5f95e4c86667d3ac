// Write coalescing: under load, decisions leave in a few socket writes instead
// of one write each. ioredis writes every command to its socket at once, one
// syscall per command: in the gateway, a third of a request's CPU went to
// write syscalls (client, upstream, Redis), and Redis pays again reading them.
//
// Like Nagle's algorithm, a command on an idle connection (no reply pending)
// leaves at once: there is nothing to wait behind, and holding it would only
// add latency (and count against the deadline). When replies are pending,
// Redis is busy anyway: the command corks the socket, and the batch leaves
// after BATCH commands or at the end of the event loop's turn (setImmediate),
// so the decisions of all the HTTP requests read in one turn share a write.
// The cap keeps Redis working on one batch while the next is written (one
// batch per turn would make the two processes take turns). Fewer, larger
// writes cost both Node and Redis less CPU per decision than a write per call
// or one per tick (docs/performance.md, Engine).
//
// ioredis's own enableAutoPipelining batches through a Pipeline object per
// turn, uncapped: it gives up the cap's overlap above, so it stays off.
import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from './client.js';

/** Commands per write: enough to share a syscall, few enough to keep Redis busy meanwhile. */
export const BATCH = 16;

interface Corkable {
  cork(): void;
  uncork(): void;
}

class Coalescer {
  private corked: Corkable[] = [];
  /** Commands in the open batch; 0 when none is open. */
  private pending = 0;
  private flushScheduled = false;
  private readonly flushAtLoopTurn = () => {
    this.flushScheduled = false;
    this.flush();
  };

  constructor(private readonly client: RedisClient) {}

  /** Call just before issuing a command on the client. */
  beforeCommand(): void {
    if (this.pending > 0) {
      this.pending++;
      return;
    }
    const nodes = this.nodes();
    if (!nodes.some((node) => node.commandQueue.length > 0)) return;
    for (const node of nodes) {
      // No socket yet (connecting): commands wait in ioredis's offline queue, nothing to cork.
      if (node.stream) {
        node.stream.cork();
        this.corked.push(node.stream);
      }
    }
    this.pending = 1;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flushAtLoopTurn);
    }
  }

  /** Call just after issuing it: a full batch leaves now. */
  afterCommand(): void {
    if (this.pending >= BATCH) this.flush();
  }

  private flush(): void {
    if (this.pending === 0) return;
    this.pending = 0;
    for (const stream of this.corked) stream.uncork();
    this.corked = [];
  }

  /** The connections a command may travel on: every master of a cluster (they are few). */
  private nodes(): Redis[] {
    return isCluster(this.client) ? this.client.nodes('master') : [this.client];
  }
}

const coalescers = new WeakMap<RedisClient, Coalescer>();

/** The client's coalescer, made on first use. */
export function coalescerOf(client: RedisClient): Coalescer {
  let coalescer = coalescers.get(client);
  if (coalescer === undefined) {
    coalescer = new Coalescer(client);
    coalescers.set(client, coalescer);
  }
  return coalescer;
}
