// The operator's dashboard behind /ui: this instance's snapshot, published to
// Redis for the others, the cluster-wide overview the page polls, and the
// history (history-recorder.ts): counts written once a second, events noted
// as they happen (start and stop, breaker, rule-store changes, reloads).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { connectRedis, type RedisTarget } from '../stores/redis/connect.js';
import { ClusterFeed } from './cluster-feed.js';
import { LocalHistory } from './history-local.js';
import { HistoryRecorder } from './history-recorder.js';
import { RedisHistory } from './history-redis.js';
import type { EventKind } from './history-store.js';
import { historyView, type HistoryView, type RangeName } from './history-view.js';
import type { EngineObserver } from './engine-observer.js';
import { LocalUsageHistory, type UsageHistory } from '../usage/usage-history.js';
import { UsageRecorder } from '../usage/usage-recorder.js';
import { RedisUsageHistory } from '../usage/usage-redis.js';
import { type ClusterView, type InstanceSnapshot, mergeSnapshots, type UpstreamRow } from './snapshot.js';

export interface Overview extends ClusterView {
  self: string;
  /** `cluster`: every instance publishing to the shared Redis; `local`: this instance only, with the reason. */
  scope: 'cluster' | 'local';
  scopeNote?: string;
}

export interface DashboardOptions {
  /** The engine watched (engine-observer.ts): its health, and the decisions its observer step counted. */
  observer: EngineObserver;
  /** The shared Redis the instances publish to; absent with the memory store. */
  redis?: RedisTarget;
  logger: Logger;
  instanceId?: string;
  now?: () => number;
}

/** What the composition root tells the dashboard once the listeners are up. */
export interface DashboardProbes {
  address?: string;
  adminAddress?: string | undefined;
  upstreams?: () => UpstreamRow[];
  /** The rule-set version this instance's rule cache has applied and its store's id (none without a rule store). */
  ruleSetVersion?: (() => { version: number | undefined; storeId: string | undefined }) | undefined;
}

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const TICK_MS = 1_000;

export class Dashboard {
  readonly id: string;
  readonly history: HistoryRecorder;
  /** Each tenant's consumption per limit (usage-recorder.ts), for GET /tenants/{id}/usage. */
  readonly usage: UsageRecorder;
  private readonly feed: ClusterFeed | undefined;
  private readonly now: () => number;
  private readonly startedAt: number;
  private readonly timer: NodeJS.Timeout;
  private probes: DashboardProbes = {};
  private rules: { changes: number; lastChangeAt?: number } = { changes: 0 };
  private breakerOpen = false;

  constructor(private readonly options: DashboardOptions) {
    this.id = options.instanceId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
    let store: RedisHistory | LocalHistory = new LocalHistory(this.now);
    let usage: UsageHistory = new LocalUsageHistory();
    if (options.redis) {
      const client = connectRedis(options.redis);
      client.on('error', (error: Error) => options.logger.debug({ err: error }, 'dashboard Redis connection error'));
      this.feed = new ClusterFeed({ client, ownsClient: true, snapshot: () => this.snapshot(), logger: options.logger });
      store = new RedisHistory(client);
      usage = new RedisUsageHistory(client);
    }
    this.history = new HistoryRecorder(store, this.id, options.logger, this.now);
    this.usage = new UsageRecorder(usage, this.id, options.logger, this.now);
    // After the history: the first snapshot, published at once, says whether it is behind.
    this.feed?.start();
    this.history.event('instance-start', `version ${version}`);
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
  }

  setProbes(probes: DashboardProbes): void {
    this.probes = { ...this.probes, ...Object.fromEntries(Object.entries(probes).filter(([, value]) => value !== undefined)) };
  }

  /** A change the rule store announced (rule, override, key, reload), or a config reload. */
  noteChange(kind: EventKind, detail?: string): void {
    if (kind !== 'config-reload') this.rules = { changes: this.rules.changes + 1, lastChangeAt: this.now() };
    this.history.event(kind, detail);
  }

  /** Once a second: breaker transitions become events, and the history goes out. */
  private tick(): void {
    const health = this.options.observer.engine.health();
    const open = health.mode !== 'memory' && !health.storeReachable;
    if (open !== this.breakerOpen) {
      this.breakerOpen = open;
      this.history.event(open ? 'breaker-open' : 'breaker-close', open ? `Redis unreachable${health.detail ? ` (${health.detail})` : ''}` : 'Redis answers again');
    }
    void this.history.flush();
  }

  snapshot(): InstanceSnapshot {
    const observer = this.options.observer;
    const health = observer.engine.health();
    const { address, adminAddress, upstreams, ruleSetVersion } = this.probes;
    const { version: applied, storeId } = ruleSetVersion?.() ?? {};
    return {
      id: this.id,
      version,
      at: this.now(),
      startedAt: this.startedAt,
      mode: health.mode,
      breaker: health.mode === 'memory' ? 'none' : health.storeReachable ? 'closed' : 'open',
      instances: observer.instances(),
      ...(health.detail ? { detail: health.detail } : {}),
      ...(address ? { address } : {}),
      ...(adminAddress ? { adminAddress } : {}),
      ...(this.feed?.rttMs !== undefined ? { redisRttMs: Math.round(this.feed.rttMs * 100) / 100 } : {}),
      rules: applied === undefined ? this.rules : { ...this.rules, version: applied, ...(storeId ? { storeId } : {}) },
      ...(upstreams ? { upstreams: upstreams() } : {}),
      ...(this.history.behind > 0 ? { history: { behind: this.history.behind } } : {}),
      stats: observer.stats.view(this.now()),
    };
  }

  async overview(): Promise<Overview> {
    const self = this.snapshot();
    if (!this.feed) return { ...mergeSnapshots([self], this.id), self: this.id, scope: 'local', scopeNote: 'memory store: this instance only (instances share nothing without Redis)' };
    try {
      const { live, gone } = await this.feed.read(this.now());
      const others = live.filter((snapshot) => snapshot.id !== this.id);
      return { ...mergeSnapshots([self, ...others], this.id, gone.filter((snapshot) => snapshot.id !== this.id)), self: this.id, scope: 'cluster' };
    } catch (error) {
      this.options.logger.debug({ err: error }, 'dashboard snapshots not read from Redis');
      const note = 'cluster view unavailable: Redis does not answer; showing this instance only';
      return { ...mergeSnapshots([self], this.id), self: this.id, scope: 'local', scopeNote: note };
    }
  }

  /** The history of a range; with the memory store, this instance's only (the view says so). */
  async historyOf(range: RangeName): Promise<HistoryView> {
    await this.history.flush();
    return historyView(this.history.store, range, this.now());
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.history.event('instance-stop');
    await Promise.all([this.history.flush(), this.usage.close()]);
    await this.feed?.stop({ ...this.snapshot(), stoppedAt: this.now() });
    this.options.observer.detach();
  }
}
