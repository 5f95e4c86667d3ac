// Membership: each instance announces itself in Redis every `heartbeatMs`
// (ZSET scored by Redis time; members silent for `ttlMs` drop out). The live
// count divides the limit for the fallback limiter; while Redis is down the
// last known count is kept. The same beat adds this region's request count and
// reads the region shares the rebalancer published.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { RedisClient } from '../stores/redis/scripts.js';
import { INSTANCES_KEY, REGION_SHARES_KEY, regionRequestsKey } from './meta-keys.js';
import { parseShares, type Shares } from './region-shares.js';
import { withTimeout } from '../core/timeout.js';

// Read by the first membership, not at import: `import 'sluice'` reads its bundle's files only (docs/library.md#weight).
let heartbeatLua: string | undefined;
const heartbeatSource = () => (heartbeatLua ??= readFileSync(new URL('./heartbeat.lua', import.meta.url), 'utf8'));

export interface MembershipOptions {
  client: RedisClient;
  instanceId: string;
  heartbeatMs: number;
  ttlMs: number;
  /** Counted under this region's request counter; undefined = no region. */
  region: string | undefined;
  logger: Logger;
}

type HeartbeatClient = RedisClient & {
  sluice_heartbeat(k1: string, k2: string, k3: string, id: string, ttl: number, requests: number): Promise<[number, string]>;
};

export class Membership {
  /** Live instances at the last successful beat (this one included). */
  count = 1;
  /** Region shares last published by the rebalancer, if any. */
  shares: Shares | undefined;
  private pendingRequests = 0;
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private readonly client: HeartbeatClient;

  constructor(private readonly options: MembershipOptions) {
    options.client.defineCommand('sluice_heartbeat', { numberOfKeys: 3, lua: heartbeatSource() });
    this.client = options.client as HeartbeatClient;
  }

  start(): void {
    if (this.timer) return;
    void this.beat();
    this.timer = setInterval(() => void this.beat(), this.options.heartbeatMs);
    this.timer.unref();
  }

  /** Counts requests decided here, reported with the next beat. */
  countRequest(): void {
    this.pendingRequests++;
  }

  /** One heartbeat; never rejects (a failed beat keeps the last known count). */
  beat(): Promise<void> {
    if (this.beating) return this.beating;
    const requests = this.options.region === undefined ? 0 : this.pendingRequests;
    this.pendingRequests -= requests;
    const region = this.options.region ?? '-';
    const call = this.client.sluice_heartbeat(
      INSTANCES_KEY,
      regionRequestsKey(region),
      REGION_SHARES_KEY,
      this.options.instanceId,
      this.options.ttlMs,
      requests,
    );
    this.beating = withTimeout(call, this.options.heartbeatMs)
      .then(([count, shares]) => {
        if (count !== this.count) this.options.logger.info({ instances: count, was: this.count }, 'live gateway instances changed');
        this.count = Math.max(1, Number(count));
        this.shares = shares ? parseShares(shares) ?? this.shares : undefined;
      })
      .catch((error: unknown) => {
        this.pendingRequests += requests;
        this.options.logger.debug({ err: error }, 'heartbeat failed; keeping the last instance count');
      })
      .finally(() => {
        this.beating = undefined;
      });
    return this.beating;
  }

  /** Stops beating and leaves the set, so peers see the count drop at once. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    await withTimeout(this.options.client.zrem(INSTANCES_KEY, this.options.instanceId), 500).catch(() => undefined);
  }
}
