// The operator's dashboard behind /ui: this instance's snapshot, published to
// Redis for the others, and the cluster-wide overview the page polls.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { connectRedis, type RedisTarget } from '../stores/redis/connect.js';
import { ClusterFeed } from './cluster-feed.js';
import type { ObservedEngine } from './observed-engine.js';
import { type ClusterView, type InstanceSnapshot, mergeSnapshots } from './snapshot.js';

export interface Overview extends ClusterView {
  self: string;
  /** `cluster`: every instance publishing to the shared Redis; `local`: this instance only, with the reason. */
  scope: 'cluster' | 'local';
  scopeNote?: string;
}

export interface DashboardOptions {
  engine: ObservedEngine;
  /** The shared Redis the instances publish to; absent with the memory store. */
  redis?: RedisTarget;
  logger: Logger;
  instanceId?: string;
  now?: () => number;
}

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export class Dashboard {
  readonly id: string;
  private readonly feed: ClusterFeed | undefined;
  private readonly now: () => number;

  constructor(private readonly options: DashboardOptions) {
    this.id = options.instanceId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.now = options.now ?? Date.now;
    if (options.redis) {
      const client = connectRedis(options.redis);
      client.on('error', (error: Error) => options.logger.debug({ err: error }, 'dashboard Redis connection error'));
      this.feed = new ClusterFeed({ client, ownsClient: true, snapshot: () => this.snapshot(), logger: options.logger });
      this.feed.start();
    }
  }

  snapshot(): InstanceSnapshot {
    const engine = this.options.engine;
    const health = engine.health();
    return {
      id: this.id,
      version,
      at: this.now(),
      mode: health.mode,
      breaker: health.mode === 'memory' ? 'none' : health.storeReachable ? 'closed' : 'open',
      instances: engine.instances(),
      ...(health.detail ? { detail: health.detail } : {}),
      stats: engine.stats.view(this.now()),
    };
  }

  async overview(): Promise<Overview> {
    const self = this.snapshot();
    if (!this.feed) return { ...mergeSnapshots([self], this.id), self: this.id, scope: 'local', scopeNote: 'memory store: this instance only (instances share nothing without Redis)' };
    try {
      const others = (await this.feed.read(this.now())).filter((snapshot) => snapshot.id !== this.id);
      return { ...mergeSnapshots([self, ...others], this.id), self: this.id, scope: 'cluster' };
    } catch (error) {
      this.options.logger.debug({ err: error }, 'dashboard snapshots not read from Redis');
      const note = 'cluster view unavailable: Redis does not answer; showing this instance only';
      return { ...mergeSnapshots([self], this.id), self: this.id, scope: 'local', scopeNote: note };
    }
  }

  close(): Promise<void> {
    return this.feed?.stop(this.id) ?? Promise.resolve();
  }
}
