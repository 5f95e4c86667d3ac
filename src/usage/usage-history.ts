// Each tenant's consumption over the last hour and day, per limit: what
// `GET /tenants/{id}/usage` reports beside the buckets' state. Counts go in
// time buckets of two sizes (5 minutes, kept a little over an hour; 1 hour,
// kept a little over a day), per tenant, so a tenant's whole history is two
// dozen small hashes whatever the number of tenants, and nothing is a
// Prometheus series per tenant. Redis holds the cluster's (usage-redis.ts);
// without Redis, this process holds its own (LocalUsageHistory below).
import { BoundedLru } from '../core/lru.js';

export interface UsageCell {
  /** Units admitted (a request's cost on that limit). */
  units: number;
  /** Requests admitted. */
  requests: number;
  /** Requests this limit refused. */
  refused: number;
}

export const emptyUsageCell = (): UsageCell => ({ units: 0, requests: 0, refused: 0 });

export function addUsage(into: UsageCell, cell: UsageCell): void {
  into.units += cell.units;
  into.requests += cell.requests;
  into.refused += cell.refused;
}

export interface UsageResolution {
  name: '5m' | '1h';
  seconds: number;
  /** How many of its buckets, the current one included, make the period it reports. */
  span: number;
}

/** The last hour: the 12 latest 5-minute buckets, the current one included. */
export const FIVE_MINUTES: UsageResolution = { name: '5m', seconds: 300, span: 12 };
/** The last day: the 24 latest hours, the current one included. */
export const ONE_HOUR: UsageResolution = { name: '1h', seconds: 3_600, span: 24 };

/** Starts (unix seconds) of the buckets that make a resolution's period ending at `nowSeconds`, oldest first. */
export function periodStarts(resolution: UsageResolution, nowSeconds: number): number[] {
  const last = Math.floor(nowSeconds / resolution.seconds) * resolution.seconds;
  return Array.from({ length: resolution.span }, (_, i) => last - (resolution.span - 1 - i) * resolution.seconds);
}

/** One tenant's counts of one 5-minute bucket, by limit id; the same counts go to that bucket's hour. */
export type LimitCells = Map<string, UsageCell>;

/**
 * One write: an instance's counts for one 5-minute bucket, by tenant,
 * numbered. A write that timed out may have been applied (the command was
 * sent), so it is sent again with the same number and applied once.
 */
export interface UsageBatch {
  instance: string;
  seq: number;
  /** The 5-minute bucket's start, unix seconds. */
  start: number;
  tenants: Map<string, LimitCells>;
}

/** A tenant's counts per limit over the last hour and the last day. */
export interface TenantConsumption {
  lastHour: Map<string, UsageCell>;
  lastDay: Map<string, UsageCell>;
}

export interface UsageHistory {
  /** Whether the counts cover the cluster or this process only. */
  readonly scope: 'cluster' | 'local';
  /** Adds a batch's counts to their 5-minute bucket and its hour, unless that batch was added already. */
  add(batch: UsageBatch): Promise<void>;
  /** `tenant`'s consumption over the hour and day ending at `nowSeconds`. */
  read(tenant: string, nowSeconds: number): Promise<TenantConsumption>;
}

/** Sums, per limit, the cells of the buckets listed. */
export function sumCells(buckets: Iterable<LimitCells | undefined>): Map<string, UsageCell> {
  const out = new Map<string, UsageCell>();
  for (const cells of buckets) {
    if (cells === undefined) continue;
    for (const [limit, cell] of cells) {
      let sum = out.get(limit);
      if (sum === undefined) {
        sum = emptyUsageCell();
        out.set(limit, sum);
      }
      addUsage(sum, cell);
    }
  }
  return out;
}

/** Tenants held by one process's history; the least recently counted go first. */
export const MAX_LOCAL_TENANTS = 100_000;

interface TenantBuckets {
  /** By bucket start (unix seconds). */
  fine: Map<number, LimitCells>;
  hourly: Map<number, LimitCells>;
}

/** This process's history, for the memory store: the same buckets, pruned as they age out of their period. */
export class LocalUsageHistory implements UsageHistory {
  readonly scope = 'local' as const;
  private readonly tenants = new BoundedLru<string, TenantBuckets>(MAX_LOCAL_TENANTS);

  async add({ start, tenants }: UsageBatch): Promise<void> {
    const hour = Math.floor(start / ONE_HOUR.seconds) * ONE_HOUR.seconds;
    for (const [tenant, cells] of tenants) {
      let buckets = this.tenants.get(tenant);
      if (buckets === undefined) {
        buckets = { fine: new Map(), hourly: new Map() };
        this.tenants.set(tenant, buckets);
      }
      merge(buckets.fine, start, cells);
      merge(buckets.hourly, hour, cells);
      prune(buckets.fine, start - FIVE_MINUTES.seconds * FIVE_MINUTES.span);
      prune(buckets.hourly, hour - ONE_HOUR.seconds * ONE_HOUR.span);
    }
  }

  async read(tenant: string, nowSeconds: number): Promise<TenantConsumption> {
    const buckets = this.tenants.peek(tenant);
    const of = (resolution: UsageResolution, held: Map<number, LimitCells> | undefined) => sumCells(periodStarts(resolution, nowSeconds).map((start) => held?.get(start)));
    return { lastHour: of(FIVE_MINUTES, buckets?.fine), lastDay: of(ONE_HOUR, buckets?.hourly) };
  }
}

function merge(held: Map<number, LimitCells>, start: number, cells: LimitCells): void {
  let bucket = held.get(start);
  if (bucket === undefined) {
    bucket = new Map();
    held.set(start, bucket);
  }
  for (const [limit, cell] of cells) {
    const sum = bucket.get(limit);
    if (sum === undefined) bucket.set(limit, { ...cell });
    else addUsage(sum, cell);
  }
}

function prune(held: Map<number, LimitCells>, before: number): void {
  for (const start of held.keys()) if (start <= before) held.delete(start);
}
