// The resilience layer's options, one shape for the config file's
// `resilience:` section and createEngine's options: the fields, their
// defaults and the checks across fields. The config file validates them once
// (under their real paths there), and the engine is built from that result.
// The schemas are built, with zod, when first read (not by `import 'sluice'`).
import type { z as Zod } from 'zod';
import { MAX_ID_LENGTH } from '../../core/ids.js';
import { lazily } from '../../core/lazy.js';
import { loadPackage } from '../../core/load-package.js';
import { MIN_REGION_SHARE } from '../../policies/rule.js';
import { ADAPTIVE_DEADLINE } from '../deadline/deadline.js';

type Z = typeof Zod;

function helpersOf(z: Z) {
  const int = (min: number, max: number) => z.number().int('must be an integer').min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);
  const id = z.string().regex(/^[A-Za-z0-9._~@+-]+$/, 'must be an id (letters, digits, . _ ~ @ + -)').max(MAX_ID_LENGTH);
  const share = z.number().min(MIN_REGION_SHARE, `must be at least ${MIN_REGION_SHARE}`).max(1, 'must be at most 1');
  return { int, id, share };
}
type Helpers = ReturnType<typeof helpersOf>;

function breakerSchemaOf(z: Z, { int }: Helpers) {
  return z.object({
    /** Consecutive failed or timed-out Redis calls that open the breaker. */
    failureThreshold: int(1, 1_000_000).default(5).meta({ description: 'consecutive failed or timed-out Redis calls that open the breaker' }),
    /** Failure percentage within the rolling window that opens it. */
    errorThresholdPercentage: z.number().min(1).max(100).default(50).meta({ description: 'failure percentage within the rolling window that opens it' }),
    /** Calls within the window before the percentage is considered. */
    volumeThreshold: int(0, 1_000_000).default(20).meta({ description: 'calls within the window before the percentage counts' }),
    /** Length of the rolling window, ms. */
    rollingWindowMs: int(100, 600_000).default(1000).meta({ description: 'length of the rolling window' }),
    /** Time the breaker stays open before one probe is let through, ms. */
    resetTimeoutMs: int(10, 600_000).default(500).meta({ description: 'time open before one probe goes through' }),
    /**
     * How long Redis must stay silent on a call before it counts as a failure, ms.
     * A shorter silence (a busy machine) still sends the request to the fallback
     * at the deadline, but Redis's late reply is reconciled and the breaker stays closed.
     */
    silenceMs: int(1, 600_000).default(250).meta({ description: 'a call counts as a breaker failure only after this much Redis silence (never less than the deadline); see [resilience.md](resilience.md#deadline-and-breaker)' }),
  }).strict();
}

function hotKeySchemaOf(z: Z, { int }: Helpers) {
  return z.object({
    /** Requests per second on one key, seen by one instance, above which it leases by itself; 0 = never. */
    autoLeaseRatePerSec: z.number().min(0).max(1e9).default(1000).meta({ description: 'per-instance rate on one key above which it leases by itself; `0` = never' }),
    /** Units per lease for automatically leased keys (capped at capacity / instances). */
    batch: int(1, 10_000).default(50).meta({ description: 'units per automatic lease, capped at capacity ÷ instances' }),
    /** Unspent leased units are dropped after this long, ms. */
    leaseTtlMs: int(10, 600_000).default(1000).meta({ description: 'unspent leased units are dropped after this long' }),
  }).strict();
}

function rebalanceSchemaOf(z: Z, { int, id, share }: Helpers) {
  const redisTargetSchema = z
    .object({ url: z.string().regex(/^rediss?:\/\/\S+$/, 'must be a redis:// URL').optional(), cluster: z.array(z.string()).min(1).optional() })
    .strict();
  return z.object({
    /** The other regions' Redis, by region name (this region's own Redis is the engine's). */
    peers: z.record(id, redisTargetSchema).meta({ description: 'the other regions\' Redis, by region name: `{us: {url: "redis://…"}}` or `{us: {cluster: ["host:port"]}}`' }),
    /** How often shares move, ms (default five minutes). */
    intervalMs: int(1000, 86_400_000).default(300_000).meta({ description: 'how often shares move' }),
    minShare: share.default(0.05).meta({ description: 'lower bound of a region\'s share (at most `maxShare`)' }),
    maxShare: z.number().min(0).max(1).default(0.95).meta({ description: 'upper bound of a region\'s share' }),
    /** Largest change of one region's share per round. */
    maxStep: z.number().positive().max(1).default(0.1).meta({ description: 'largest change of one region\'s share per round' }),
  }).strict();
}
type RebalanceConfig = Zod.infer<ReturnType<typeof rebalanceSchemaOf>>;

/** The fields, with their defaults. */
function fieldsSchemaOf(z: Z) {
  const helpers = helpersOf(z);
  const { int, id, share } = helpers;
  return z.object({
    /** Budget of one Redis call: how long its connection may stay silent, ms; absent = adaptive (deadline.ts AdaptiveDeadline, between ADAPTIVE_DEADLINE's floorMs and ceilingMs). */
    deadlineMs: z.number().positive('must be positive').max(10_000, 'must be at most 10000').optional(),
    /**
     * Opt-in WAIT: an admission waits until `replicas` replicas acknowledged its
     * write, at most `timeoutMs` (below deadlineMs); fewer, it stands and
     * sluice_redis_wait_unreplicated_total rises. Not on a Cluster.
     */
    replicaWait: z.object({ replicas: int(1, 100), timeoutMs: int(1, 10_000) }).strict().optional(),
    /** A fresh client is still connecting, not slow: calls wait this long for its first bytes before the deadline applies, ms. */
    connectGraceMs: int(0, 60_000).default(1000).meta({ description: 'a client still connecting is waited for this long before the deadline applies' }),
    breaker: breakerSchemaOf(z, helpers).prefault({}).meta({ description: 'the circuit breaker over Redis calls ([resilience.md](resilience.md#deadline-and-breaker))' }),
    /** Fixed number of gateway instances (SLUICE_INSTANCES); absent = count live instances in Redis. */
    instances: int(1, 10_000).optional(),
    /** Membership heartbeat period, ms. */
    heartbeatMs: int(50, 60_000).default(1000).meta({ description: 'membership heartbeat period' }),
    /** An instance not seen for this long no longer counts, ms. */
    memberTtlMs: int(150, 600_000).default(3000).meta({ description: 'an instance not seen for this long no longer counts (at least twice `heartbeatMs`)' }),
    /** This gateway's region, for rules with regionShares; absent = one region, full limits. */
    region: id.optional(),
    /** Share of a limit this region enforces when the rule has no regionShares entry and none is published. */
    defaultRegionShare: share.default(1).meta({ description: 'this region\'s share of a limit when the rule names none and none is published' }),
    hotKey: hotKeySchemaOf(z, helpers).prefault({}).meta({ description: 'hot keys: leases of units taken from Redis in batches ([resilience.md](resilience.md))' }),
    /** Most refused keys remembered ("over limit until T"). */
    negativeCacheSize: int(1, 10_000_000).default(10_000).meta({ description: 'refused keys remembered ("over limit until T")' }),
    /** Most keys whose last Redis state is kept to seed the fallback, and hot-key counters. */
    stateCacheSize: int(1, 10_000_000).default(10_000).meta({ description: 'keys whose last Redis state is kept to seed the fallback, and hot-key counters' }),
    /** Most buckets of the local fallback limiter. */
    fallbackMaxKeys: int(1, 100_000_000).default(100_000).meta({ description: 'buckets of the local fallback limiter' }),
    /** Budget of reset and inspect (admin calls), ms. */
    adminTimeoutMs: int(10, 60_000).default(1000).meta({ description: 'budget of the admin API\'s bucket reset and inspect calls' }),
    /** Background rebalancing of region shares; only with `region`. */
    rebalance: rebalanceSchemaOf(z, helpers).optional().meta({ description: 'background rebalancing of region shares; needs the top-level `region`' }),
  }).strict();
}

type Path = readonly (string | number)[];

/** Where the cross-field checks report: the fields' paths in the caller's shape. */
export interface ResiliencePaths {
  memberTtlMs: Path;
  rebalance: Path;
}

/** The checks across fields, reported under `paths` (so a config file names its own fields). */
export function checkResilience(
  config: { heartbeatMs: number; memberTtlMs: number; rebalance?: RebalanceConfig | undefined; region?: string | undefined; deadlineMs?: number; replicaWait?: { timeoutMs: number } | undefined },
  ctx: Zod.RefinementCtx,
  paths: ResiliencePaths,
): void {
  if (config.heartbeatMs * 2 > config.memberTtlMs) {
    ctx.addIssue({ code: 'custom', path: [...paths.memberTtlMs], message: `must be at least twice heartbeatMs (${config.heartbeatMs})` });
  }
  const deadlineMs = config.deadlineMs ?? ADAPTIVE_DEADLINE.ceilingMs;
  if (config.replicaWait && config.replicaWait.timeoutMs >= deadlineMs) {
    ctx.addIssue({ code: 'custom', path: ['replicaWait', 'timeoutMs'], message: `must be below deadlineMs (${deadlineMs}${config.deadlineMs === undefined ? ', the adaptive deadline’s ceiling' : ''}): a WAIT still waiting at the deadline sends the decision to the fallback` });
  }
  if (config.rebalance && config.region === undefined) ctx.addIssue({ code: 'custom', path: [...paths.rebalance], message: 'needs region' });
  if (config.rebalance) checkShares(config.rebalance, ctx, paths.rebalance);
}

/** The rebalancer's bounds must leave room for shares that sum to 1 over every region (the peers and this one). */
function checkShares(rebalance: RebalanceConfig, ctx: Zod.RefinementCtx, at: Path): void {
  const { minShare, maxShare, peers } = rebalance;
  const regions = Object.keys(peers).length + 1;
  if (minShare > maxShare) ctx.addIssue({ code: 'custom', path: [...at, 'minShare'], message: `must not exceed maxShare (${maxShare})` });
  else if (regions * minShare > 1 || regions * maxShare < 1) {
    ctx.addIssue({ code: 'custom', path: [...at, 'minShare'], message: `${regions} regions cannot each hold between ${minShare} and ${maxShare} of a limit` });
  }
}

function buildSchemas(z: Z) {
  const fields = fieldsSchemaOf(z);
  const config = fields.superRefine((options, ctx) => checkResilience(options, ctx, { memberTtlMs: ['memberTtlMs'], rebalance: ['rebalance'] }));
  return { fields, config };
}

let built: ReturnType<typeof buildSchemas> | undefined;
const schemas = () => (built ??= buildSchemas(loadPackage<{ z: Z }>('zod').z));

/** The fields alone; the config file takes them without `instances`, `region`, `deadlineMs` and `replicaWait`, which live elsewhere there. */
export const resilienceFieldsSchema = lazily(() => schemas().fields);
/** createEngine's options: the fields and the checks across them. */
export const resilienceConfigSchema = lazily(() => schemas().config);

export type ResilienceConfig = Zod.infer<typeof resilienceConfigSchema>;
export type ResilienceConfigInput = Zod.input<typeof resilienceConfigSchema>;
