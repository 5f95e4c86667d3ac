// Several limits per request (issue 13) in the accuracy bench: a two-limit
// route, its limits on one hash slot (one script call) or on two (reserve and
// refund), with 1 and 4 engines ("gateway instances", each its own Redis
// connection, in this process) on one Redis; and what each layout costs.
import type { Redis } from 'ioredis';
import { derivedId } from '../../src/core/ids.js';
import { parseRule, type Rule } from '../../src/policies/rule.js';
import { createResilientEngine } from '../../src/engine-factory/create-engine.js';
import type { LimitCall } from '../../src/limiter/engine/engine.js';
import type { ResilientEngine } from '../../src/limiter/engine/resilient-engine.js';
import { stepAll } from '../../src/policies/compose.js';
import { pino } from 'pino';

/** The binding limit: 100 at once, 100 a second. */
const BURST = parseRule({ policy: 'token_bucket', capacity: 100, refillPerSecond: 100 });
/** A daily quota that never binds here: it counts every unit charged to it, exactly. */
const QUOTA_LIMIT = 1_000_000;
const QUOTA = parseRule({ policy: 'fixed_window', limit: QUOTA_LIMIT, windowMs: 86_400_000 });
const OFFERED_PER_SEC = 400;

export interface MultiAccuracyRow {
  variant: string;
  k: number;
  sent: number;
  allowed: number;
  /** The composed models (src/policies/compose.ts) run over the instants the requests were sent. */
  expected: number;
  ratio: number;
  withinBound: boolean;
  /** Units the quota holds beyond the admitted requests': what refused requests drained (target 0). */
  drainedByRefused: number;
}

export interface MultiCostRow {
  variant: string;
  requests: number;
  decisionsPerSec: number;
  /** Redis calls per request: EVALSHA and EVAL (INFO commandstats; the commands a script runs inside are not calls). */
  redisCallsPerRequest: number;
  /** Store calls the engine made per request (its counters). */
  storeCallsPerRequest: number;
}

const silent = pino({ level: 'silent' });
/** Hot-key leasing off: multi-limit calls bypass it, so the one-limit row must too to compare like with like. */
const engineFor = (url: string): ResilientEngine =>
  createResilientEngine({ redis: { url }, logger: silent, deadlineMs: 2000, heartbeatMs: 1000, hotKey: { autoLeaseRatePerSec: 0 } });

/** A per-IP limit as tight as the burst (100 at once, 100 a second): both near empty together, so reservations can cost admissions. */
const PER_IP = parseRule({ policy: 'token_bucket', capacity: 100, refillPerSecond: 100 });

type Layout = 'same slot' | 'cross slot' | 'cross slot, both binding';

const ipOf = (id: string): string => derivedId('ip.', `10.9.${id.length}.${id.charCodeAt(id.length - 1) % 250}`);

/**
 * A request's limits: the burst, and the quota in the same slot (tenant) or
 * another (the client IP); or, both binding, the burst and the quota on the
 * tenant's slot beside a binding per-IP limit on another.
 */
function callsOf(layout: Layout, id: string, burst: Rule = BURST, quota: Rule = QUOTA): LimitCall[] {
  const quotaTag = layout === 'cross slot' ? ipOf(id) : id;
  const calls: LimitCall[] = [
    { bucket: { tag: id, name: 'burst' }, rule: burst, cost: 1 },
    { bucket: { tag: quotaTag, name: `quota-${id}` }, rule: quota, cost: 1 },
  ];
  if (layout === 'cross slot, both binding') calls.push({ bucket: { tag: ipOf(id), name: `per-ip-${id}` }, rule: PER_IP, cost: 1 });
  return calls;
}

/** The composed models over the send instants: how many an exact two-limit limiter admits. */
function exactAdmitted(calls: readonly LimitCall[], sentAt: readonly number[]): number {
  const states: unknown[] = calls.map(() => undefined);
  let admitted = 0;
  for (const at of sentAt) {
    const result = stepAll(calls.map((call, i) => ({ state: states[i], rule: call.rule, cost: 1, shadow: false })), at);
    if (result.admitted) admitted++;
    result.steps.forEach((step, i) => {
      if (step.write) states[i] = step.state;
    });
  }
  return admitted;
}

/** Open loop: `OFFERED_PER_SEC` requests a second for `durationMs`, spread over the engines in turn. */
async function offer(engines: ResilientEngine[], calls: LimitCall[], durationMs: number): Promise<{ sentAt: number[]; allowed: number }> {
  const total = Math.round((OFFERED_PER_SEC * durationMs) / 1000);
  const start = Date.now() + 50;
  const sentAt: number[] = [];
  const pending: Promise<boolean>[] = [];
  for (let n = 0; n < total; n++) {
    const due = start + (n * 1000) / OFFERED_PER_SEC;
    const wait = due - Date.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    sentAt.push(Date.now());
    pending.push(engines[n % engines.length]!.decideAll(calls).then((outcome) => outcome.allowed));
  }
  const allowed = (await Promise.all(pending)).filter(Boolean).length;
  return { sentAt, allowed };
}

export async function multiAccuracyRows(url: string, durationMs: number): Promise<MultiAccuracyRow[]> {
  const rows: MultiAccuracyRow[] = [];
  for (const layout of ['same slot', 'cross slot', 'cross slot, both binding'] as const) {
    for (const k of [1, 4]) {
      const engines = Array.from({ length: k }, () => engineFor(url));
      const calls = callsOf(layout, `multi-${layout.replaceAll(/[ ,]+/g, '-')}-${k}`);
      try {
        const { sentAt, allowed } = await offer(engines, calls, durationMs);
        const expected = exactAdmitted(calls, sentAt);
        const quota = await engines[0]!.inspect(calls[1]!.bucket, QUOTA);
        const ratio = Math.round((allowed / expected) * 10_000) / 10_000;
        const drainedByRefused = QUOTA_LIMIT - quota.decision.remaining - allowed;
        rows.push({ variant: `${calls.length} limits, ${layout}, K=${k}`, k, sent: sentAt.length, allowed, expected, ratio, withinBound: ratio >= 0.99 && ratio <= 1.01, drainedByRefused });
      } finally {
        await Promise.all(engines.map((engine) => engine.close()));
      }
    }
  }
  return rows;
}

async function commandCalls(client: Redis): Promise<number> {
  const info = await client.info('commandstats');
  let total = 0;
  for (const match of info.matchAll(/cmdstat_(evalsha|eval):calls=(\d+)/g)) total += Number(match[2]);
  return total;
}

/** Closed loop, 32 callers for `durationMs` on one engine: decisions/s and Redis calls per request. */
async function costOf(variant: string, url: string, client: Redis, calls: LimitCall[], durationMs: number): Promise<MultiCostRow> {
  const engine = engineFor(url);
  try {
    await engine.decideAll(calls); // loads the script
    const [calls0, store0] = [await commandCalls(client), engine.counters().storeCalls];
    const end = Date.now() + durationMs;
    let requests = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (Date.now() < end) {
          await engine.decideAll(calls);
          requests++;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    // The membership heartbeat (a script, one a second) is in it too.
    const redisCalls = (await commandCalls(client)) - calls0;
    const perRequest = (n: number) => Math.round((n / requests) * 100) / 100;
    return { variant, requests, decisionsPerSec: Math.round(requests / seconds), redisCallsPerRequest: perRequest(redisCalls), storeCallsPerRequest: perRequest(engine.counters().storeCalls - store0) };
  } finally {
    await engine.close();
  }
}

export async function multiCostRows(url: string, client: Redis, durationMs: number): Promise<MultiCostRow[]> {
  const roomy = parseRule({ policy: 'token_bucket', capacity: 1_000_000_000, refillPerSecond: 1_000_000 });
  const one: LimitCall[] = [{ bucket: { tag: 'cost-one', name: 'burst' }, rule: roomy, cost: 1 }];
  return [
    await costOf('one limit', url, client, one, durationMs),
    await costOf('two limits, same slot', url, client, callsOf('same slot', 'cost-same', roomy), durationMs),
    await costOf('two limits, cross slot', url, client, callsOf('cross slot', 'cost-cross', roomy), durationMs),
    await costOf('two limits, cross slot, most refused (refunds)', url, client, callsOf('cross slot', 'cost-refund', BURST), durationMs),
  ];
}
