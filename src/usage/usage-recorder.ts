// What each tenant consumed, gathered in memory from the gateway's decisions
// and handed to the usage history every few seconds: one script call per
// active tenant per flush, never a Redis call per request. Only the tenant's
// own buckets count (limits keyed by `tenant` or `tenant+ip`, whose hash tag
// is the tenant); a limit keyed by address, header, claim or route is not
// the tenant's. A write that fails is sent again, numbered as before, with
// the next flush (up to an hour of batches); past the bounds below, counts
// are dropped and counted in /metrics, never held without limit.
import { Counter } from 'prom-client';
import type { Logger } from 'pino';
import { type Bucket, isValidId } from '../core/ids.js';
import type { LimitsDecision } from '../limiter/engine/engine.js';
import { resilienceRegistry } from '../metrics/registry.js';
import { FIVE_MINUTES, type LimitCells, type UsageBatch, type UsageHistory } from './usage-history.js';

/** Tenants counted per 5-minute bucket between two flushes; a flood of fresh tenants past it is dropped and counted. */
export const MAX_PENDING_TENANTS = 10_000;
/** Batches kept for a store that does not answer: an hour of flushes. */
const MAX_OUTBOX = 720;
const FLUSH_MS = 5_000;

const dropped = new Counter({
  name: 'sluice_usage_dropped_total',
  help: "Per-tenant usage counts not recorded: 'tenants' past the pending bound between two flushes, 'batches' older than an hour while the store did not answer",
  labelNames: ['reason'] as const,
  registers: [resilienceRegistry],
});

/** What the recorder reads of each of a request's limits (request-limits/types.ts RequestLimit). */
export interface CountedLimit {
  readonly limitId: string;
  /** The bucket's hash tag is read: the tenant's own buckets have the tenant's id. */
  readonly bucket: Pick<Bucket, 'tag'>;
  readonly cost: number;
}

/** What the gateway tells of each decided request (gateway.ts decided). */
export interface UsageObserver {
  decided(tenant: string | undefined, limits: readonly CountedLimit[], outcome: LimitsDecision): void;
  /** A usage-priced limit settled after the response: `delta` units more (negative: fewer) than its decision took. */
  settled(tenant: string | undefined, limit: CountedLimit, delta: number): void;
}

export class UsageRecorder implements UsageObserver {
  /** By 5-minute bucket start, then tenant. */
  private pending = new Map<number, Map<string, LimitCells>>();
  private pendingTenants = 0;
  private readonly outbox: UsageBatch[] = [];
  private seq = 0;
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly history: UsageHistory,
    private readonly instance: string,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  decided(tenant: string | undefined, limits: readonly CountedLimit[], outcome: LimitsDecision): void {
    if (tenant === undefined) return;
    let cells: LimitCells | undefined;
    for (let i = 0; i < limits.length; i++) {
      const limit = limits[i]!;
      // Not the tenant's bucket, or not consulted (the negative cache refused on another limit).
      if (limit.bucket.tag !== tenant || outcome.consulted?.[i] === false) continue;
      const decision = outcome.decisions[i];
      if (decision === undefined) continue;
      cells ??= this.cellsOf(tenant);
      if (cells === undefined) return;
      let cell = cells.get(limit.limitId);
      if (cell === undefined) {
        cell = { units: 0, requests: 0, refused: 0 };
        cells.set(limit.limitId, cell);
      }
      // A request is charged only when every limit admits it (an all-or-nothing decision).
      if (outcome.allowed) {
        cell.units += limit.cost;
        cell.requests++;
      } else if (!decision.allowed) cell.refused++;
    }
  }

  settled(tenant: string | undefined, limit: CountedLimit, delta: number): void {
    if (tenant === undefined || limit.bucket.tag !== tenant) return;
    const cells = this.cellsOf(tenant);
    if (cells === undefined) return;
    const cell = cells.get(limit.limitId);
    if (cell === undefined) cells.set(limit.limitId, { units: delta, requests: 0, refused: 0 });
    else cell.units += delta;
  }

  /** The current bucket's cells of `tenant`; undefined past the pending bound (counted). */
  private cellsOf(tenant: string): LimitCells | undefined {
    const start = Math.floor(this.now() / 1000 / FIVE_MINUTES.seconds) * FIVE_MINUTES.seconds;
    let tenants = this.pending.get(start);
    if (tenants === undefined) {
      tenants = new Map();
      this.pending.set(start, tenants);
    }
    let cells = tenants.get(tenant);
    if (cells === undefined) {
      // A tenant's id is its key's hash tag: one that is not a valid id never reaches a key.
      if (this.pendingTenants >= MAX_PENDING_TENANTS || !isValidId(tenant)) {
        dropped.labels('tenants').inc();
        return undefined;
      }
      cells = new Map();
      tenants.set(tenant, cells);
      this.pendingTenants++;
    }
    return cells;
  }

  /** Hands what gathered to the history; never rejects (what failed waits for the next flush). */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async write(): Promise<void> {
    for (const [start, tenants] of this.pending) if (tenants.size > 0) this.outbox.push({ instance: this.instance, seq: this.seq++, start, tenants });
    this.pending = new Map();
    this.pendingTenants = 0;
    if (this.outbox.length > MAX_OUTBOX) dropped.labels('batches').inc(this.outbox.splice(0, this.outbox.length - MAX_OUTBOX).length);
    try {
      // In order and unchanged: a batch sent again keeps its number, so it is applied once.
      while (this.outbox.length > 0) {
        await this.history.add(this.outbox[0]!);
        this.outbox.shift();
      }
    } catch (error) {
      this.logger.debug({ err: error, behind: this.outbox.length }, 'tenant usage not written; sent again with the next flush');
    }
  }
}
