// The cluster-wide part of the dashboard: every instance writes its snapshot
// each second into one Redis hash (a field per instance, under the `{meta}`
// hash tag like the membership set), and the page's data endpoint reads them
// all. Snapshots older than STALE_MS are ignored (their instance stopped or
// lost Redis), and removed once they are much older.
import type { Logger } from 'pino';
import type { RedisClient } from '../stores/redis/scripts.js';
import { type InstanceSnapshot, parseSnapshot } from './snapshot.js';

export const DASHBOARD_KEY = 'sluice:{meta}:dashboard';
const STALE_MS = 5_000;
const FORGET_MS = 60_000;
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

  constructor(private readonly options: ClusterFeedOptions) {}

  start(): void {
    if (this.timer) return;
    void this.publish();
    this.timer = setInterval(() => void this.publish(), this.options.intervalMs ?? 1_000);
    this.timer.unref();
  }

  /** Writes this instance's snapshot; never rejects (the next beat tries again). */
  publish(): Promise<void> {
    if (this.publishing) return this.publishing;
    const snapshot = this.options.snapshot();
    const write = this.options.client.multi().hset(DASHBOARD_KEY, snapshot.id, JSON.stringify(snapshot)).pexpire(DASHBOARD_KEY, FORGET_MS).exec();
    this.publishing = timeout(write)
      .then(() => undefined)
      .catch((error: unknown) => this.options.logger.debug({ err: error }, 'dashboard snapshot not published'))
      .finally(() => {
        this.publishing = undefined;
      });
    return this.publishing;
  }

  /** Every live instance's last snapshot; rejects when Redis does not answer. */
  async read(now = Date.now()): Promise<InstanceSnapshot[]> {
    const fields = await timeout(this.options.client.hgetall(DASHBOARD_KEY));
    const live: InstanceSnapshot[] = [];
    const gone: string[] = [];
    for (const [id, text] of Object.entries(fields)) {
      const snapshot = parseSnapshot(text);
      if (!snapshot || now - snapshot.at > FORGET_MS) gone.push(id);
      else if (now - snapshot.at <= STALE_MS) live.push(snapshot);
    }
    if (gone.length > 0) void timeout(this.options.client.hdel(DASHBOARD_KEY, ...gone)).catch(() => undefined);
    return live;
  }

  /** Stops publishing and removes this instance's snapshot, so the page drops it at once. */
  async stop(id: string): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.publishing;
    await timeout(this.options.client.hdel(DASHBOARD_KEY, id)).catch(() => undefined);
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
