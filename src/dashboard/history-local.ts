// The history without Redis (memory store): the same buckets and events, in
// this process only, pruned as they age and capped like Redis's, so memory
// stays bounded (at most 360 + 1,440 buckets of MAX_HISTORY_ROUTES cells).
import { addCell, type Cell, emptyCell } from './history-cells.js';
import {
  type BucketCells,
  bucketStarts,
  type HistoryBatch,
  type HistoryEvent,
  type HistoryStore,
  MAX_EVENTS,
  MAX_HISTORY_ROUTES,
  ONE_MINUTE,
  OTHER_HISTORY_ROUTE,
  type Resolution,
  RESOLUTIONS,
  TEN_SECONDS,
} from './history-store.js';

export class LocalHistory implements HistoryStore {
  readonly scope = 'local' as const;
  private readonly buckets = new Map<Resolution, Map<number, BucketCells>>(RESOLUTIONS.map((r) => [r, new Map()]));
  private events: HistoryEvent[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  /** In process nothing times out half-way: every batch is added once. */
  async add({ start, cells }: HistoryBatch): Promise<void> {
    for (const [route, cell] of cells) {
      this.addTo(TEN_SECONDS, start, route, cell);
      this.addTo(ONE_MINUTE, Math.floor(start / 60) * 60, route, cell);
    }
    this.prune();
  }

  private addTo(resolution: Resolution, start: number, route: string, cell: Cell): void {
    const byStart = this.buckets.get(resolution)!;
    let cells = byStart.get(start);
    if (!cells) {
      cells = new Map();
      byStart.set(start, cells);
    }
    if (!cells.has(route) && cells.size >= MAX_HISTORY_ROUTES) route = OTHER_HISTORY_ROUTE;
    let into = cells.get(route);
    if (!into) {
      into = emptyCell();
      cells.set(route, into);
    }
    addCell(into, cell);
  }

  private prune(): void {
    const second = Math.floor(this.now() / 1000);
    for (const [resolution, byStart] of this.buckets) {
      for (const start of byStart.keys()) if (start < second - resolution.keepSeconds) byStart.delete(start);
    }
  }

  async read(resolution: Resolution, fromSecond: number, toSecond: number): Promise<Map<number, BucketCells>> {
    const byStart = this.buckets.get(resolution)!;
    const out = new Map<number, BucketCells>();
    for (const start of bucketStarts(resolution, fromSecond, toSecond)) {
      const cells = byStart.get(start);
      if (cells) out.set(start, new Map([...cells].map(([route, cell]) => [route, [...cell]])));
    }
    return out;
  }

  async pushEvents(events: HistoryEvent[]): Promise<void> {
    this.events = [...this.events, ...events].slice(-MAX_EVENTS);
  }

  async readEvents(sinceMs: number): Promise<HistoryEvent[]> {
    const oldest = this.now() - ONE_MINUTE.keepSeconds * 1000;
    return this.events.filter((event) => event.at >= sinceMs && event.at >= oldest);
  }

  /** Buckets held now, at each resolution: for the test of its bound. */
  size(): { tenSeconds: number; minutes: number } {
    return { tenSeconds: this.buckets.get(TEN_SECONDS)!.size, minutes: this.buckets.get(ONE_MINUTE)!.size };
  }

  async close(): Promise<void> {}
}
