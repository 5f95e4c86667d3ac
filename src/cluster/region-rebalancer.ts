// The optional background task behind rebalanceShares: every `intervalMs` it
// reads each region's request counter from that region's own Redis (instances
// INCRBY it with their heartbeat), turns the increase since the last run into
// observed traffic, and publishes the new shares to every region's Redis, where
// that region's instances read them with their next heartbeat.
import type { Logger } from 'pino';
import type { RedisClient } from '../stores/redis/scripts.js';
import { REGION_SHARES_KEY, regionRequestsKey } from './meta-keys.js';
import { parseShares, rebalanceShares, type ShareBounds, type Shares } from './region-shares.js';

export interface RegionRebalancerOptions {
  /** Every region's Redis client, this region's included, by region name. */
  regions: Record<string, RedisClient>;
  /** Shares before any traffic is observed (default: the published ones, else equal). */
  initial?: Shares;
  bounds: ShareBounds;
  /** Default 300,000 (five minutes). */
  intervalMs: number;
  logger: Logger;
  /** Clients the rebalancer opened itself and closes on stop. */
  ownedClients?: RedisClient[];
}

export class RegionRebalancer {
  private last: Record<string, number> | undefined;
  private shares: Shares | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RegionRebalancerOptions) {
    this.shares = options.initial;
  }

  start(): void {
    if (this.timer) return;
    void this.runOnce().catch(() => undefined);
    this.timer = setInterval(() => void this.runOnce().catch(() => undefined), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.all((this.options.ownedClients ?? []).map((client) => client.quit().catch(() => client.disconnect())));
  }

  /** One round: read counters, decide, publish. Returns the published shares (undefined on the first, baseline round). */
  async runOnce(): Promise<Shares | undefined> {
    const names = Object.keys(this.options.regions);
    const counts = await Promise.all(names.map((name) => this.options.regions[name]!.get(regionRequestsKey(name))));
    const now = Object.fromEntries(names.map((name, i) => [name, Number(counts[i] ?? 0)]));
    const previous = this.last;
    this.last = now;
    this.shares ??= await this.readPublished(names);
    if (previous === undefined) return undefined;
    // A counter lower than before means that Redis restarted: count from zero.
    const observed = Object.fromEntries(names.map((name) => [name, now[name]! >= (previous[name] ?? 0) ? now[name]! - (previous[name] ?? 0) : now[name]!]));
    const next = rebalanceShares(observed, this.shares ?? {}, this.options.bounds);
    this.shares = next;
    const text = JSON.stringify(next);
    const results = await Promise.allSettled(names.map((name) => this.options.regions[name]!.set(REGION_SHARES_KEY, text)));
    const failed = names.filter((_, i) => results[i]!.status === 'rejected');
    this.options.logger.info({ observed, shares: next, failed }, 'region shares rebalanced');
    return next;
  }

  private async readPublished(names: string[]): Promise<Shares | undefined> {
    for (const name of names) {
      const text = await this.options.regions[name]!.get(REGION_SHARES_KEY).catch(() => null);
      const shares = text ? parseShares(text) : undefined;
      if (shares) return shares;
    }
    return undefined;
  }
}
