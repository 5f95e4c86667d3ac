// The dashboard's overview in a primary with workers: the primary decides
// nothing, so the page is made of the snapshots every worker (of this machine
// and the others) publishes to Redis as its own instance. "self" marks one of
// this machine's workers.
import type { Logger } from 'pino';
import { connectRedis, type RedisTarget } from '../stores/redis/connect.js';
import { ClusterFeed } from './cluster-feed.js';
import type { Overview } from './dashboard.js';
import { RedisHistory } from './history-redis.js';
import { RedisUsageHistory } from '../usage/usage-redis.js';
import { historyView, type HistoryView, type RangeName } from './history-view.js';
import { type InstanceSnapshot, mergeSnapshots } from './snapshot.js';

export class WorkersOverview {
  private readonly feed: ClusterFeed;
  /** The history every worker writes to Redis; the primary only reads it. */
  private readonly history: RedisHistory;
  /** Each tenant's consumption, written by every worker; the primary only reads it. */
  readonly usage: RedisUsageHistory;

  constructor(
    redis: RedisTarget,
    private readonly isLocal: (id: string) => boolean,
    private readonly logger: Logger,
  ) {
    const client = connectRedis(redis);
    client.on('error', (error: Error) => logger.debug({ err: error }, 'dashboard Redis connection error'));
    // Reads only: there is no snapshot of the primary's own.
    this.feed = new ClusterFeed({ client, ownsClient: true, snapshot: () => undefined as unknown as InstanceSnapshot, logger });
    this.history = new RedisHistory(client);
    this.usage = new RedisUsageHistory(client);
  }

  historyOf(range: RangeName): Promise<HistoryView> {
    return historyView(this.history, range, Date.now());
  }

  async overview(): Promise<Overview> {
    let snapshots: InstanceSnapshot[];
    let gone: InstanceSnapshot[];
    try {
      ({ live: snapshots, gone } = await this.feed.read());
    } catch (error) {
      this.logger.debug({ err: error }, 'dashboard snapshots not read from Redis');
      return empty('cluster view unavailable: Redis does not answer');
    }
    if (snapshots.length === 0) return empty('no worker has published its snapshot yet');
    const self = snapshots.find((snapshot) => this.isLocal(snapshot.id))?.id ?? '';
    return { ...mergeSnapshots(snapshots, self, gone), self, scope: 'cluster' };
  }

  close(): Promise<void> {
    return this.feed.stop();
  }
}

function empty(scopeNote: string): Overview {
  return { seconds: [], routes: {}, top: [], shadowTop: [], degraded: {}, instances: [], self: '', scope: 'local', scopeNote };
}
