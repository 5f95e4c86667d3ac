// What the gateway reports, gathered in memory and handed to the history store
// once a second: one script call per second per instance, never a Redis call
// per request. The hot path adds a few numbers to the current bucket's cell.
// A write that fails is sent again, numbered as before, by the next flush (up
// to an hour of buckets); events wait the same way (up to MAX_PENDING_EVENTS).
import type { Logger } from 'pino';
import { addRequest, emptyCell } from './history-cells.js';
import { observeRequest } from './metrics.js';
import { type BucketCells, type EventKind, type HistoryBatch, type HistoryEvent, type HistoryStore, MAX_HISTORY_ROUTES, OTHER_HISTORY_ROUTE, TEN_SECONDS } from './history-store.js';

const MAX_PENDING_BUCKETS = TEN_SECONDS.keepSeconds / TEN_SECONDS.seconds;
const MAX_PENDING_EVENTS = 100;

/** What the gateway calls when a response is finished (gateway/gateway.ts). */
export interface RequestObserver {
  /** verdict: 0 allowed, 1 refused, 2 admitted by a shadow rule that would have refused, -1 answered before the decision (no decision time). */
  request(route: string, verdict: number, status: number, requestMs: number, decisionMs: number | undefined): void;
}

export class HistoryRecorder implements RequestObserver {
  private pending = new Map<number, BucketCells>();
  /** Batches numbered and not yet acknowledged, oldest first. */
  private readonly outbox: HistoryBatch[] = [];
  private seq = 0;
  private events: HistoryEvent[] = [];
  private flushing: Promise<void> | undefined;
  /** Whether the last write failed: the page says the history is behind. */
  private failed = false;

  constructor(
    readonly store: HistoryStore,
    private readonly instance: string,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  request(route: string, verdict: number, status: number, requestMs: number, decisionMs: number | undefined): void {
    observeRequest(route, status, requestMs / 1000);
    const start = Math.floor(this.now() / 10_000) * 10;
    let cells = this.pending.get(start);
    if (!cells) {
      cells = new Map();
      this.pending.set(start, cells);
    }
    let cell = cells.get(route);
    if (!cell) {
      if (cells.size >= MAX_HISTORY_ROUTES) route = OTHER_HISTORY_ROUTE;
      cell = cells.get(route) ?? emptyCell();
      cells.set(route, cell);
    }
    addRequest(cell, verdict, status, requestMs, decisionMs);
  }

  event(kind: EventKind, detail?: string, at = this.now()): void {
    this.events.push({ at, kind, instance: this.instance, ...(detail ? { detail } : {}) });
    if (this.events.length > MAX_PENDING_EVENTS) this.events.shift();
  }

  /** Batches the store has not acknowledged since a write failed (0 once a write goes through): the page's "history behind". */
  get behind(): number {
    return this.failed ? this.outbox.length : 0;
  }

  /** Hands what gathered to the store; never rejects (what failed waits for the next flush). */
  flush(): Promise<void> {
    this.flushing ??= this.write().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async write(): Promise<void> {
    for (const [start, cells] of this.pending) this.outbox.push({ instance: this.instance, seq: this.seq++, start, cells });
    this.pending = new Map();
    // The oldest go first when Redis stays away for more than the hour kept.
    if (this.outbox.length > MAX_PENDING_BUCKETS) this.outbox.splice(0, this.outbox.length - MAX_PENDING_BUCKETS);
    try {
      // In order and unchanged: a batch sent again keeps its number, so it is applied once.
      while (this.outbox.length > 0) {
        await this.store.add(this.outbox[0]!);
        this.outbox.shift();
      }
    } catch (error) {
      this.failed = true;
      this.logger.debug({ err: error }, 'history not written');
      return;
    }
    this.failed = false;
    const events = this.events;
    this.events = [];
    try {
      await this.store.pushEvents(events);
    } catch (error) {
      this.events = [...events, ...this.events].slice(-MAX_PENDING_EVENTS);
      this.logger.debug({ err: error }, 'history events not written');
    }
  }
}
