// "Scale on paper": what the target peak (50,000 req/s, 20 instances,
// 100,000 tenants × 3 routes) needs, computed from this run's measured figures.
import type { EngineResult } from '../engine.js';
import type { GatewayResult } from '../gateway.js';
import type { HotKeyResult } from '../hotkey.js';
import { round } from './latency.js';

export const PEAK = { requestsPerSec: 50_000, instances: 20, tenants: 100_000, routesPerTenant: 3, perInstancePerSec: 2_500 } as const;
/** Keep each Redis master at no more than this share of its measured ceiling. */
export const MASTER_UTILISATION = 0.5;

export interface ScaleLine {
  what: string;
  withoutLeasing: number;
  withLeasing: number;
  unit: string;
  basis: string;
}

export interface ScaleResult {
  assumptions: string[];
  lines: ScaleLine[];
}

export function scaleOnPaper(engine: EngineResult, gateway: GatewayResult, hotkey: HotKeyResult): ScaleResult {
  const buckets = PEAK.tenants * PEAK.routesPerTenant;
  const bytes = engine.ratios.bytesPerBucket;
  const redisUs = engine.ratios.sluiceRedisUs;
  const ceiling = engine.ceiling.sluiceTokenBucket.requestsPerSec;
  const leased = hotkey.rows.find((r) => r.mode.startsWith('leasing'));
  const callsLeased = leased?.redisCallsPerRequest ?? Number.NaN;
  const sluiceRedis = gateway.rows.find((r) => r.target === 'Sluice, Redis store' && r.mode === 'saturation');
  const paced = gateway.rows.find((r) => r.target === 'Sluice, Redis store' && r.mode === 'paced');
  const perInstanceMax = sluiceRedis?.requestsPerSec.median ?? Number.NaN;
  const cpuUs = paced?.cpuUsPerRequest.median ?? Number.NaN;
  const opsPlain = PEAK.requestsPerSec;
  const opsLeased = PEAK.requestsPerSec * callsLeased;
  const masters = (ops: number) => Math.max(1, Math.ceil(ops / (ceiling * MASTER_UTILISATION)));
  const mib = (n: number) => round(n / 2 ** 20, 1);
  // Leased units live in the gateways, not Redis: the bucket count is unchanged.
  const memory = buckets * bytes;
  return {
    assumptions: [
      `${PEAK.requestsPerSec.toLocaleString('en-US')} req/s at peak over ${PEAK.instances} instances (${PEAK.perInstancePerSec.toLocaleString('en-US')} req/s each), every request one decision.`,
      `${PEAK.tenants.toLocaleString('en-US')} tenants × ${PEAK.routesPerTenant} routes = ${buckets.toLocaleString('en-US')} buckets, all alive at once (worst case: idle buckets expire).`,
      `Bytes per bucket: ${bytes} (token bucket, INFO used_memory delta, this run). Replicas double it; Redis's own baseline (~1 MiB) is left out.`,
      `Redis CPU per decision: ${redisUs} µs of script time (EVALSHA usec_per_call, this run); network I/O and protocol work come on top, which is why masters are sized from the redis-benchmark ceiling (${Number.isNaN(ceiling) ? 'n/a' : ceiling.toLocaleString('en-US')} decisions/s per single-threaded node on this machine, client on the same cores) at ≤ ${MASTER_UTILISATION * 100} % utilisation.`,
      `Leasing as measured on the hot key (batch 50): ${callsLeased} Redis calls per request. It only applies to keys hot enough to lease (or rules with lease:), so the leased column is the best case for a peak made of hot keys.`,
      `Instance headroom: Sluice with Redis at saturation served ${Number.isNaN(perInstanceMax) ? 'n/a' : perInstanceMax.toLocaleString('en-US')} req/s in one process on this machine (load generator, upstream and Redis on the same cores).`,
    ],
    lines: [
      { what: 'Redis memory for all buckets', withoutLeasing: mib(memory), withLeasing: mib(memory), unit: 'MiB per copy', basis: 'buckets × bytes per bucket' },
      { what: 'Redis decisions per second', withoutLeasing: opsPlain, withLeasing: round(opsLeased), unit: 'calls/s', basis: 'peak × Redis calls per request' },
      { what: 'Redis script CPU (all masters)', withoutLeasing: round((opsPlain * redisUs) / 1e6, 3), withLeasing: round((opsLeased * redisUs) / 1e6, 3), unit: 'cores', basis: 'calls/s × µs per call' },
      { what: 'Cluster masters needed', withoutLeasing: masters(opsPlain), withLeasing: masters(opsLeased), unit: 'masters', basis: `calls/s ÷ (ceiling × ${MASTER_UTILISATION})` },
      { what: 'Redis CPU per master at that count', withoutLeasing: round((opsPlain * redisUs) / 1e6 / masters(opsPlain), 3), withLeasing: round((opsLeased * redisUs) / 1e6 / masters(opsLeased), 3), unit: 'cores (script time)', basis: 'script CPU ÷ masters' },
      { what: 'Instance headroom at 2,500 req/s', withoutLeasing: round(perInstanceMax / PEAK.perInstancePerSec, 2), withLeasing: round(perInstanceMax / PEAK.perInstancePerSec, 2), unit: '× (saturation ÷ 2,500)', basis: 'measured saturation of one Sluice process with Redis; leasing saves Redis round trips, not gateway CPU, so it is left unchanged' },
      { what: 'Gateway CPU per instance at 2,500 req/s', withoutLeasing: round((cpuUs * PEAK.perInstancePerSec) / 1e6, 3), withLeasing: round((cpuUs * PEAK.perInstancePerSec) / 1e6, 3), unit: 'cores', basis: 'CPU µs per request (paced run) × 2,500' },
      { what: 'Worst over-admission per hot key', withoutLeasing: 0, withLeasing: PEAK.instances * 50, unit: 'units', basis: 'instances × batch (the leasing bound)' },
    ],
  };
}
