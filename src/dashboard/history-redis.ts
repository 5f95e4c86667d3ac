// The cluster's history in Redis. Each instance adds its counts of the last
// second with one script call: a hash per time bucket, a field per route
// holding the cell (comma-separated counts) added element-wise, so counts of
// every instance add up exactly. Keys expire with their resolution, and a
// bucket holds at most MAX_HISTORY_ROUTES routes (the rest add up under
// `(other)`): memory is bounded whatever routes and instances send.
// All keys share the `{history}` hash tag: one slot, so one script call.
import type { RedisClient } from '../stores/redis/scripts.js';
import { withTimeout } from '../core/timeout.js';
import { type Cell, decodeCell, encodeCell } from './history-cells.js';
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
  parseEvent,
  type Resolution,
  TEN_SECONDS,
} from './history-store.js';

export const HISTORY_PREFIX = 'sluice:{history}:';
export const EVENTS_KEY = `${HISTORY_PREFIX}events`;
const CALL_TIMEOUT_MS = 2_000;
/** A minute of grace past the keep time: a bucket is never read half-expired. */
const GRACE_SECONDS = 60;

// KEYS: the 10-s bucket, its minute, the writer's last applied batch number.
const ADD_SCRIPT = `
local applied = tonumber(redis.call('GET', KEYS[3]) or '-1')
if tonumber(ARGV[5]) <= applied then return 0 end
redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[1])
for k = 1, 2 do
  local key = KEYS[k]
  for i = 6, #ARGV, 2 do
    local field = ARGV[i]
    local old = redis.call('HGET', key, field)
    if not old and redis.call('HLEN', key) >= tonumber(ARGV[3]) then
      field = ARGV[4]
      old = redis.call('HGET', key, field)
    end
    local sum = {}
    local n = 0
    for v in string.gmatch(ARGV[i + 1], '[^,]+') do n = n + 1; sum[n] = tonumber(v) end
    if old then
      local j = 0
      for v in string.gmatch(old, '[^,]+') do j = j + 1; sum[j] = (sum[j] or 0) + (tonumber(v) or 0) end
      if j > n then n = j end
    end
    for j = 1, n do sum[j] = string.format('%d', sum[j] or 0) end
    redis.call('HSET', key, field, table.concat(sum, ','))
  end
  redis.call('PEXPIRE', key, ARGV[k])
end
return 1`;

export function historyKey(resolution: Resolution, start: number): string {
  return `${HISTORY_PREFIX}${resolution.name}:${start}`;
}

/** The writer's last applied batch number; expires like the 10-s buckets. */
export function appliedKey(instance: string): string {
  return `${HISTORY_PREFIX}applied:${instance}`;
}

const ttlMs = (resolution: Resolution) => String((resolution.keepSeconds + GRACE_SECONDS) * 1000);

export class RedisHistory implements HistoryStore {
  readonly scope = 'cluster' as const;

  constructor(private readonly client: RedisClient) {}

  async add({ instance, seq, start, cells }: HistoryBatch): Promise<void> {
    if (cells.size === 0) return;
    const minute = Math.floor(start / 60) * 60;
    const args = [ttlMs(TEN_SECONDS), ttlMs(ONE_MINUTE), String(MAX_HISTORY_ROUTES), OTHER_HISTORY_ROUTE, String(seq)];
    for (const [route, cell] of cells) args.push(route, encodeCell(cell));
    const keys = [historyKey(TEN_SECONDS, start), historyKey(ONE_MINUTE, minute), appliedKey(instance)];
    await withTimeout(this.client.eval(ADD_SCRIPT, keys.length, ...keys, ...args), CALL_TIMEOUT_MS);
  }

  async read(resolution: Resolution, fromSecond: number, toSecond: number): Promise<Map<number, BucketCells>> {
    const starts = bucketStarts(resolution, fromSecond, toSecond);
    const pipeline = this.client.pipeline();
    for (const start of starts) pipeline.hgetall(historyKey(resolution, start));
    const replies = (await withTimeout(pipeline.exec(), CALL_TIMEOUT_MS)) ?? [];
    const out = new Map<number, BucketCells>();
    starts.forEach((start, i) => {
      const [error, fields] = replies[i] ?? [];
      if (error || !fields) return;
      const cells = new Map<string, Cell>();
      for (const [route, text] of Object.entries(fields as Record<string, string>)) cells.set(route, decodeCell(text));
      if (cells.size > 0) out.set(start, cells);
    });
    return out;
  }

  async pushEvents(events: HistoryEvent[]): Promise<void> {
    if (events.length === 0) return;
    const write = this.client
      .multi()
      .lpush(EVENTS_KEY, ...events.map((event) => JSON.stringify(event)))
      .ltrim(EVENTS_KEY, 0, MAX_EVENTS - 1)
      .pexpire(EVENTS_KEY, Number(ttlMs(ONE_MINUTE)))
      .exec();
    await withTimeout(write, CALL_TIMEOUT_MS);
  }

  async readEvents(sinceMs: number): Promise<HistoryEvent[]> {
    const texts = await withTimeout(this.client.lrange(EVENTS_KEY, 0, MAX_EVENTS - 1), CALL_TIMEOUT_MS);
    // A push that timed out and was sent again may be there twice.
    const seen = new Set<string>();
    return texts
      .map(parseEvent)
      .filter((event): event is HistoryEvent => event !== undefined && event.at >= sinceMs)
      .filter((event) => {
        const key = `${event.at} ${event.instance} ${event.kind} ${event.detail ?? ''}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      })
      .sort((a, b) => a.at - b.at);
  }

  async close(): Promise<void> {}
}
