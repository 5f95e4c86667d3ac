// Redis Sentinel as it is run: one master, one replica, three sentinels
// (quorum 2), each a real redis-server on a free loopback port, owned by one
// test file or bench. The master can be killed and the promotion awaited.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from './ports.js';
import { type RedisServer, startRedis, waitForPing } from './redis-server.js';
import { until } from './poll.js';

export const MASTER_NAME = 'sluice-master';

export interface SentinelSetup {
  readonly master: RedisServer;
  readonly replica: RedisServer;
  /** `127.0.0.1:port` of each sentinel. */
  readonly sentinels: string[];
  /** The port the sentinels name as master now. */
  masterPort(): Promise<number>;
  /** Waits until the sentinels name a master other than `oldPort` and it answers as a master. */
  waitForPromotion(oldPort: number, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

export async function startSentinels(): Promise<SentinelSetup> {
  const master = await startRedis();
  const replica = await startRedis(['--replicaof', '127.0.0.1', String(master.port)]);
  const dir = mkdtempSync(join(tmpdir(), 'sluice-sentinels-'));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  const killAll = () => {
    for (const child of children) child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  try {
    for (let i = 0; i < 3; i++) {
      const port = await freePort();
      const conf = join(dir, `sentinel-${i}.conf`);
      writeFileSync(conf, `port ${port}\nbind 127.0.0.1\ndir ${dir}\nsentinel monitor ${MASTER_NAME} 127.0.0.1 ${master.port} 2\nsentinel down-after-milliseconds ${MASTER_NAME} 1000\nsentinel failover-timeout ${MASTER_NAME} 5000\n`);
      children.push(spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' }));
      ports.push(port);
      await waitForPing(port);
    }
    await until(askedAgainOnError(async () => (await linkUp(replica)) && (await sentinelsKnowEachOther(ports))), 'replica in sync and sentinels acquainted', 30_000, 100);
  } catch (error) {
    killAll();
    await Promise.all([master.stop(), replica.stop()]);
    throw error;
  }
  const masterPort = () => askSentinel(ports[0]!);
  return {
    master,
    replica,
    sentinels: ports.map((port) => `127.0.0.1:${port}`),
    masterPort,
    async waitForPromotion(oldPort, timeoutMs = 30_000) {
      await until(askedAgainOnError(async () => (await masterPort()) !== oldPort), 'the sentinels promoting the replica', timeoutMs, 100);
      return masterPort();
    },
    async stop() {
      killAll();
      process.removeListener('exit', killAll);
      await Promise.all([master.stop(), replica.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function askSentinel(port: number): Promise<number> {
  const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
  try {
    const [, masterPort] = (await client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME)) as [string, string];
    return Number(masterPort);
  } finally {
    client.disconnect();
  }
}

async function linkUp(replica: RedisServer): Promise<boolean> {
  const client = replica.client();
  try {
    return /master_link_status:up/.test(await client.info('replication'));
  } finally {
    client.disconnect();
  }
}

/** Each sentinel sees the two others (quorum needs them) and the replica. */
async function sentinelsKnowEachOther(ports: number[]): Promise<boolean> {
  for (const port of ports) {
    const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 });
    try {
      const fields = (await client.call('SENTINEL', 'MASTER', MASTER_NAME)) as string[];
      const value = (name: string) => Number(fields[fields.indexOf(name) + 1]);
      if (value('num-other-sentinels') < 2 || value('num-slaves') < 1) return false;
    } finally {
      client.disconnect();
    }
  }
  return true;
}

/** A node still starting or just killed refuses the question: that counts as not yet, and until asks again. */
const askedAgainOnError = (check: () => Promise<boolean>) => () => check().catch(() => false);
