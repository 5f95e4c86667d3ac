// Replication lag that loses writes for real. A paused replica (SIGSTOP)
// alone loses nothing: what the master sent sits in the kernel's socket
// buffers (tens of MB on loopback) and reaches the replica even after the
// master is killed. So the link is also filled with padding (PADDING_MB of
// values under `hashTag`, so on a cluster they go to the same master); the
// writes after it wait in the master's own output buffer and die with it, as
// with a replica truly behind.
import { Redis } from 'ioredis';

const PADDING_MB = 64;

/** Pauses the replica (`pause`) and fills its link from master `masterPort`: what the master acknowledges from now on is lost with it. */
export async function holdReplication(masterPort: number, pause: () => void, hashTag = 'failover'): Promise<void> {
  pause();
  const client = new Redis({ host: '127.0.0.1', port: masterPort });
  try {
    const value = 'x'.repeat(1 << 20);
    await Promise.all(Array.from({ length: PADDING_MB }, (_, i) => client.set(`pad:{${hashTag}}:${i}`, value)));
  } finally {
    client.disconnect();
  }
}

/** The port of a master's replica, from its INFO replication. */
export async function replicaOf(masterPort: number): Promise<number> {
  const client = new Redis({ host: '127.0.0.1', port: masterPort });
  try {
    const port = /slave0:[^\r\n]*port=(\d+)/.exec(await client.info('replication'))?.[1];
    if (!port) throw new Error(`master ${masterPort} has no replica`);
    return Number(port);
  } finally {
    client.disconnect();
  }
}
