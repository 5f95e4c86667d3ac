// Where the history lives: time-bucketed cells per route at two resolutions,
// and a bounded list of events. Redis holds the cluster's (history-redis.ts);
// without Redis, this process holds its own (history-local.ts).
import type { Cell } from './history-cells.js';

export interface Resolution {
  name: '10s' | '1m';
  seconds: number;
  /** How long a bucket is kept after it starts. */
  keepSeconds: number;
}

export const TEN_SECONDS: Resolution = { name: '10s', seconds: 10, keepSeconds: 3_600 };
export const ONE_MINUTE: Resolution = { name: '1m', seconds: 60, keepSeconds: 86_400 };
export const RESOLUTIONS = [TEN_SECONDS, ONE_MINUTE] as const;

/** Routes kept per bucket, cluster-wide; the rest add up under one name. */
export const MAX_HISTORY_ROUTES = 64;
export const OTHER_HISTORY_ROUTE = '(other)';
/** Events kept, newest first. */
export const MAX_EVENTS = 1_000;

export type EventKind = 'instance-start' | 'instance-stop' | 'breaker-open' | 'breaker-close' | 'rule-change' | 'override-change' | 'key-change' | 'config-reload';

export interface HistoryEvent {
  /** Unix ms. */
  at: number;
  kind: EventKind;
  instance: string;
  detail?: string;
}

/** Cells of one 10-s bucket, by route; the same counts go to its minute. */
export type BucketCells = Map<string, Cell>;

/**
 * One write: an instance's counts for one 10-s bucket, numbered. A write that
 * timed out may still be applied later (the command was sent), so it is sent
 * again with the same number and the store applies each number once.
 */
export interface HistoryBatch {
  instance: string;
  seq: number;
  start: number;
  cells: BucketCells;
}

export interface HistoryStore {
  /** Whether the history covers the cluster or this process only. */
  readonly scope: 'cluster' | 'local';
  /** Adds a batch's cells to its 10-s bucket and to that bucket's minute, unless that batch was added already. */
  add(batch: HistoryBatch): Promise<void>;
  /** The buckets of `resolution` starting in [fromSecond, toSecond], by start. */
  read(resolution: Resolution, fromSecond: number, toSecond: number): Promise<Map<number, BucketCells>>;
  pushEvents(events: HistoryEvent[]): Promise<void>;
  /** Events since `sinceMs`, oldest first. */
  readEvents(sinceMs: number): Promise<HistoryEvent[]>;
  close(): Promise<void>;
}

/** Bucket starts of a range, oldest first. */
export function bucketStarts(resolution: Resolution, fromSecond: number, toSecond: number): number[] {
  const starts: number[] = [];
  const step = resolution.seconds;
  for (let s = Math.floor(fromSecond / step) * step; s <= toSecond; s += step) starts.push(s);
  return starts;
}

export function parseEvent(text: string): HistoryEvent | undefined {
  try {
    const value = JSON.parse(text) as HistoryEvent;
    if (typeof value?.at !== 'number' || typeof value.kind !== 'string' || typeof value.instance !== 'string') return undefined;
    return value;
  } catch {
    return undefined;
  }
}
