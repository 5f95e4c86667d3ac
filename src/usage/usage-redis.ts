// The cluster's usage history in Redis: per tenant and bucket, one hash
// `sluice:usage:{tenant}:5m:<start>` (and `…:1h:<start>`) whose fields are
// `<limit>|u` (units), `<limit>|r` (requests) and `<limit>|x` (refused),
// added with HINCRBY so every instance's counts add up exactly. The tenant is
// the hash tag, as in its buckets' keys (`rl:{tenant}:…`): its history is in
// its own slot, one script call per tenant and batch, and an id can never
// reach another tenant's key (ids hold no braces or colons: core/ids.ts).
// Each hash keeps, per writer, the last batch number it applied, so a batch
// sent again after a timeout is applied once.
import { withTimeout } from '../core/timeout.js';
import type { RedisClient } from '../stores/redis/scripts.js';
import { FIVE_MINUTES, type LimitCells, ONE_HOUR, periodStarts, sumCells, type TenantConsumption, type UsageBatch, type UsageCell, type UsageHistory, type UsageResolution } from './usage-history.js';

const CALL_TIMEOUT_MS = 2_000;
/** A bucket is kept its period and one bucket more, so it is never read half-expired. */
const ttlMs = (resolution: UsageResolution) => String((resolution.span + 1) * resolution.seconds * 1000);

// KEYS: the 5-minute hash and its hour's. ARGV: ttls, the writer's field, the
// batch number, then limit, units, requests, refused for each limit counted.
const ADD_SCRIPT = `
local applied = tonumber(redis.call('HGET', KEYS[1], ARGV[3]) or '-1')
if tonumber(ARGV[4]) <= applied then return 0 end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
for k = 1, 2 do
  for i = 5, #ARGV, 4 do
    local limit = ARGV[i]
    if ARGV[i + 1] ~= '0' then redis.call('HINCRBY', KEYS[k], limit .. '|u', ARGV[i + 1]) end
    if ARGV[i + 2] ~= '0' then redis.call('HINCRBY', KEYS[k], limit .. '|r', ARGV[i + 2]) end
    if ARGV[i + 3] ~= '0' then redis.call('HINCRBY', KEYS[k], limit .. '|x', ARGV[i + 3]) end
  end
  redis.call('PEXPIRE', KEYS[k], ARGV[k])
end
return 1`;

export function usageKey(tenant: string, resolution: UsageResolution, start: number): string {
  return `sluice:usage:{${tenant}}:${resolution.name}:${start}`;
}

/** The field holding a writer's last applied batch number: `#` is in no limit id, so it never meets a count's field. */
const appliedField = (instance: string) => `#applied:${instance}`;

export class RedisUsageHistory implements UsageHistory {
  readonly scope = 'cluster' as const;

  constructor(private readonly client: RedisClient) {}

  async add({ instance, seq, start, tenants }: UsageBatch): Promise<void> {
    const hour = Math.floor(start / ONE_HOUR.seconds) * ONE_HOUR.seconds;
    const calls: Promise<unknown>[] = [];
    for (const [tenant, cells] of tenants) {
      const args = [ttlMs(FIVE_MINUTES), ttlMs(ONE_HOUR), appliedField(instance), String(seq)];
      for (const [limit, cell] of cells) args.push(limit, String(cell.units), String(cell.requests), String(cell.refused));
      calls.push(this.client.eval(ADD_SCRIPT, 2, usageKey(tenant, FIVE_MINUTES, start), usageKey(tenant, ONE_HOUR, hour), ...args));
    }
    // Every tenant's call is sent before any is awaited (one round trip's worth); the first failure fails the batch, sent again whole.
    await withTimeout(Promise.all(calls), CALL_TIMEOUT_MS);
  }

  async read(tenant: string, nowSeconds: number): Promise<TenantConsumption> {
    const fine = periodStarts(FIVE_MINUTES, nowSeconds);
    const hourly = periodStarts(ONE_HOUR, nowSeconds);
    // One slot (the tenant's tag), so one pipeline even on a Cluster.
    const pipeline = this.client.pipeline();
    for (const start of fine) pipeline.hgetall(usageKey(tenant, FIVE_MINUTES, start));
    for (const start of hourly) pipeline.hgetall(usageKey(tenant, ONE_HOUR, start));
    const replies = (await withTimeout(pipeline.exec(), CALL_TIMEOUT_MS)) ?? [];
    const cells = replies.map(([error, fields]) => {
      if (error) throw error;
      return decodeCells(fields as Record<string, string>);
    });
    return { lastHour: sumCells(cells.slice(0, fine.length)), lastDay: sumCells(cells.slice(fine.length)) };
  }
}

/** A bucket's hash read back into cells by limit; the writers' batch numbers are left out. */
function decodeCells(fields: Record<string, string>): LimitCells {
  const out: LimitCells = new Map();
  for (const [field, value] of Object.entries(fields)) {
    const bar = field.lastIndexOf('|');
    if (field.startsWith('#') || bar < 1) continue;
    const limit = field.slice(0, bar);
    let cell: UsageCell | undefined = out.get(limit);
    if (cell === undefined) {
      cell = { units: 0, requests: 0, refused: 0 };
      out.set(limit, cell);
    }
    const count = Number(value) || 0;
    const kind = field.slice(bar + 1);
    if (kind === 'u') cell.units += count;
    else if (kind === 'r') cell.requests += count;
    else if (kind === 'x') cell.refused += count;
  }
  return out;
}
