// The cluster-wide part of the dashboard: every instance writes its snapshot
// each second into one Redis hash (a field per instance, under the `{meta}`
// hash tag like the membership set), and the page's data endpoint reads them
// all. A snapshot older than STALE_MS is an instance gone (it stopped, and
// says so with `stoppedAt`, or it lost Redis or crashed): listed as gone, not
// counted, and removed once older than FORGET_MS.
import type { Logger } from 'pino';
import type { RedisClient } from '../stores/redis/scripts.js';
import { type InstanceSnapshot, parseSnapshot } from './snapshot.js';

export const DASHBOARD_KEY = 'sluice:{meta}:dashboard';
const STALE_MS = 5_000;
/** How long a gone instance stays on the page. */
export const FORGET_MS = 600_000;
const CALL_TIMEOUT_MS = 1_000;

export interface ClusterFeedOptions {
  client: RedisClient;
  /** Close the client with the feed. */
  ownsClient: boolean;
  snapshot: () => InstanceSnapshot;
  intervalMs?: number;
  logger: Logger;
}

export class ClusterFeed {
  private timer: NodeJS.Timeout | undefined;
  private publishing: Promise<void> | undefined;
  /** The last write's round trip (ms), published with the next snapshot. */
  rttMs: number | undefined;

  constructor(private readonly options: ClusterFeedOptions) {}

  start(): void {
    if (this.timer) return;
    void this.publish();
    this.timer = setInterval(() => void this.publish(), this.options.intervalMs ?? 1_000);
    this.timer.unref();
  }

  /** Writes this instance's snapshot; never rejects (the next beat tries again). */
  publish(snapshot = this.options.snapshot()): Promise<void> {
    if (this.publishing) return this.publishing;
    const started = performance.now();
    const write = this.options.client.multi().hset(DASHBOARD_KEY, snapshot.id, JSON.stringify(snapshot)).pexpire(DASHBOARD_KEY, FORGET_MS).exec();
    this.publishing = timeout(write)
      .then(() => {
        this.rttMs = performance.now() - started;
      })
      .catch((error: unknown) => this.options.logger.debug({ err: error }, 'dashboard snapshot not published'))
      .finally(() => {
        this.publishing = undefined;
      });
    return this.publishing;
  }

  /** Every instance's last snapshot, live or gone lately; rejects when Redis does not answer. */
  async read(now = Date.now()): Promise<{ live: InstanceSnapshot[]; gone: InstanceSnapshot[] }> {
    const fields = await timeout(this.options.client.hgetall(DASHBOARD_KEY));
    const live: InstanceSnapshot[] = [];
    const gone: InstanceSnapshot[] = [];
    const forgotten: string[] = [];
    for (const [id, text] of Object.entries(fields)) {
      const snapshot = parseSnapshot(text);
      if (!snapshot || now - snapshot.at > FORGET_MS) forgotten.push(id);
      else if (snapshot.stoppedAt === undefined && now - snapshot.at <= STALE_MS) live.push(snapshot);
      else gone.push(snapshot);
    }
    if (forgotten.length > 0) void timeout(this.options.client.hdel(DASHBOARD_KEY, ...forgotten)).catch(() => undefined);
    return { live, gone };
  }

  /** Stops publishing and leaves `last` (marked stopped), so the page shows this instance as gone for FORGET_MS. */
  async stop(last?: InstanceSnapshot): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.publishing;
    if (last) await this.publish(last);
    if (this.options.ownsClient) this.options.client.disconnect();
  }
}

function timeout<T>(call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Redis did not answer within ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS);
  });
  return Promise.race([call, expired]).finally(() => clearTimeout(timer));
}
