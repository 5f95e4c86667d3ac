// A real 6-node Redis Cluster (3 masters, 3 replicas) on free loopback ports, owned by one
// test file. Tests kill a master and wait for its replica to take over to prove failover handling.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, type ClusterOptions, Redis } from 'ioredis';
import { freePort } from './ports.js';
import { waitForPing } from './redis-server.js';
import { until } from './poll.js';

const run = promisify(execFile);
const HOST = '127.0.0.1';
const NODE_COUNT = 6;
// Redis opens its cluster bus on port + 10000, so ports stay low enough for that to exist.
const MAX_PORT = 55_000;
const BUS_OFFSET = 10_000;

export type ClusterRole = 'master' | 'replica';

export interface ClusterNode {
  readonly port: number;
  /** Refreshed by waitForFailover(); a promoted replica becomes 'master'. */
  role: ClusterRole;
  /** False once killNode() has killed it. */
  alive: boolean;
}

export interface RedisCluster {
  readonly nodes: ClusterNode[];
  readonly seeds: { host: string; port: number }[];
  /** A fresh ioredis Cluster client with quick retries (the caller closes it). */
  client(overrides?: ClusterOptions): Cluster;
  /** Port of the master that currently serves the key's slot. */
  masterFor(key: string): Promise<number>;
  killNode(port: number): Promise<void>;
  pauseNode(port: number): void;
  resumeNode(port: number): void;
  /** Waits until a replica of the killed master serves its slots and every survivor says cluster_state:ok. */
  waitForFailover(oldMasterPort: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisCluster(): Promise<RedisCluster> {
  const ports = await pickPorts(NODE_COUNT);
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cluster-'));
  const children = new Map<number, ChildProcess>();
  const killAll = () => {
    for (const child of children.values()) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
  };
  // A crashed test file must not leave six redis-servers behind.
  process.once('exit', killAll);

  const nodes: ClusterNode[] = ports.map((port) => ({ port, role: 'master', alive: true }));
  const alivePorts = () => nodes.filter((n) => n.alive).map((n) => n.port);

  const stop = async () => {
    killAll();
    await Promise.all([...children.values()].map(exited));
    process.removeListener('exit', killAll);
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    for (const port of ports) children.set(port, spawn('redis-server', nodeArgs(port, dir), { stdio: 'ignore' }));
    await Promise.all(ports.map((port) => waitForPing(port)));
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((p) => `${HOST}:${p}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ]);
    await until(askedAgainOnError(() => allOk(ports)), 'cluster_state:ok on every node', 30_000, 100);
    await refreshRoles(nodes);
    const replicas = nodes.filter((n) => n.role === 'replica').map((n) => n.port);
    // Failover tests need replicas that already hold the data, so wait for the links.
    await until(askedAgainOnError(() => replicasLinked(replicas)), 'replicas linked to their masters', 30_000, 100);
  } catch (error) {
    await stop();
    throw error;
  }

  const cluster: RedisCluster = {
    nodes,
    seeds: ports.map((port) => ({ host: HOST, port })),
    client: (overrides = {}) =>
      new Cluster(
        ports.map((port) => ({ host: HOST, port })),
        {
          enableOfflineQueue: true,
          clusterRetryStrategy: () => 100,
          retryDelayOnFailover: 100,
          retryDelayOnClusterDown: 100,
          retryDelayOnTryAgain: 100,
          slotsRefreshTimeout: 1000,
          redisOptions: { connectTimeout: 1000, maxRetriesPerRequest: 1 },
          ...overrides,
        },
      ),
    async masterFor(key) {
      return withNode(alivePorts()[0]!, async (redis) => {
        const slot = Number(await redis.call('CLUSTER', 'KEYSLOT', key));
        const ranges = (await redis.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]]][];
        const range = ranges.find(([from, to]) => slot >= from && slot <= to);
        if (!range) throw new Error(`no master serves slot ${slot} of key ${key}`);
        return Number(range[2][1]);
      });
    },
    async killNode(port) {
      const node = nodes.find((n) => n.port === port);
      const child = children.get(port);
      if (!node || !child) throw new Error(`port ${port} is not a node of this cluster`);
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exited(child);
      node.alive = false;
    },
    pauseNode(port) {
      children.get(port)?.kill('SIGSTOP');
    },
    resumeNode(port) {
      children.get(port)?.kill('SIGCONT');
    },
    async waitForFailover(oldMasterPort, timeoutMs = 30_000) {
      const survivors = alivePorts();
      await until(askedAgainOnError(async () => (await allOk(survivors)) && !(await mastersOf(survivors[0]!)).includes(oldMasterPort)), `a replica of ${oldMasterPort} to take over`, timeoutMs, 100);
      await refreshRoles(nodes);
    },
    stop,
  };
  return cluster;
}

function nodeArgs(port: number, dir: string): string[] {
  return [
    '--port', String(port),
    '--bind', HOST,
    '--dir', dir,
    '--save', '',
    '--appendonly', 'no',
    '--cluster-enabled', 'yes',
    '--cluster-config-file', join(dir, `nodes-${port}.conf`),
    // Low timeout so a killed master is declared failed, and replaced, within a few seconds.
    '--cluster-node-timeout', '1000',
    // A replica is always fit to be promoted, however long it was cut off.
    '--cluster-replica-validity-factor', '0',
  ];
}

/** Distinct free ports below MAX_PORT whose cluster bus port (port + 10000) is free as well. */
async function pickPorts(count: number): Promise<number[]> {
  const picked: number[] = [];
  for (let attempt = 0; picked.length < count; attempt++) {
    if (attempt > 1000) throw new Error('could not find free ports for the cluster');
    const port = await freePort();
    if (port >= MAX_PORT || picked.includes(port) || picked.includes(port + BUS_OFFSET)) continue;
    if (picked.some((p) => p + BUS_OFFSET === port)) continue;
    if (await isFree(port + BUS_OFFSET)) picked.push(port);
  }
  return picked;
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, HOST, () => server.close(() => resolve(true)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
}

async function withNode<T>(port: number, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({ port, host: HOST, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

async function allOk(ports: number[]): Promise<boolean> {
  const states = await Promise.all(
    ports.map((port) => withNode(port, async (r) => String(await r.call('CLUSTER', 'INFO')))),
  );
  return states.every((info) => info.includes('cluster_state:ok'));
}

async function mastersOf(port: number): Promise<number[]> {
  return withNode(port, async (redis) => {
    const ranges = (await redis.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    return ranges.map((range) => Number(range[2][1]));
  });
}

async function replicasLinked(ports: number[]): Promise<boolean> {
  const infos = await Promise.all(ports.map((port) => withNode(port, (r) => r.info('replication'))));
  return infos.every((info) => info.includes('master_link_status:up'));
}

/** Reads each live node's own role from CLUSTER NODES (the "myself" line). */
async function refreshRoles(nodes: ClusterNode[]): Promise<void> {
  for (const node of nodes.filter((n) => n.alive)) {
    const text = await withNode(node.port, async (r) => String(await r.call('CLUSTER', 'NODES')));
    const myself = text.split('\n').find((line) => line.includes('myself'));
    const flags = myself?.split(' ')[2] ?? '';
    node.role = flags.includes('slave') ? 'replica' : 'master';
  }
}

/** A node still starting or just killed refuses the question: that counts as not yet, and until asks again. */
const askedAgainOnError = (check: () => Promise<boolean>) => () => check().catch(() => false);
