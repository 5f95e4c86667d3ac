// What one accuracy variant offers and what it should admit. The offered
// requests are evenly spaced over the run: instance j of K sends requests
// j, j + K, j + 2K, … of the merged schedule, so together they offer `rate`
// per second whether K is 1 or 20.
import type { Rule } from '../../src/policies/rule.js';
import { policyOf } from '../../src/policies/index.js';

/**
 * Not the default 5 ms: 8 busy worker processes and Redis share 2 cores here, so Redis
 * itself is starved for tens of ms at a time, and every deadline miss sends a decision
 * to the local fallback. Its late reply is reconciled (an over-admission charged to the
 * bucket, a false refusal refunded) through each policy's adjust.
 * This bench measures the shared limit; the fault and hot-key benches measure the fallback path.
 */
export const ACCURACY_DEADLINE_MS = 100;

export interface InstanceJob {
  variant: string;
  /** Index of this instance among the variant's K, and K. */
  index: number;
  of: number;
  /** How many instances the engine is told exist (the fallback's 1/N). */
  instances: number;
  tenants: string[];
  route: string;
  rule: Rule;
  /** Requests per second this variant offers per tenant, all instances together. */
  ratePerTenant: number;
  /** Whether this instance sends (false: it exists but the load goes elsewhere). */
  sends: boolean;
}

export interface WorkerJob {
  redis: { url: string } | { cluster: string[] };
  /** Epoch ms at which every worker starts sending (real clocks). */
  startAt: number;
  durationMs: number;
  instances: InstanceJob[];
}

export interface InstanceCounts {
  variant: string;
  sent: number;
  /** Per tenant (the job's order): the real epoch ms at which each request was actually sent. */
  sentAt: number[][];
  /** The same, for when each decision came back (Redis decided in between, or the fallback at this time). */
  decidedAt: number[][];
  allowed: number;
  bySource: Record<string, number>;
}

/** Send times (ms after start) of one instance: its share of the merged, evenly spaced schedule. */
export function sendTimes(job: Pick<InstanceJob, 'index' | 'of' | 'sends'>, ratePerTenant: number, durationMs: number, allOnOne: boolean): number[] {
  const interval = 1000 / ratePerTenant;
  const total = Math.floor((durationMs / 1000) * ratePerTenant);
  const times: number[] = [];
  if (!job.sends) return times;
  for (let n = allOnOne ? 0 : job.index; n < total; n += allOnOne ? 1 : job.of) times.push(n * interval);
  return times;
}

/**
 * The ideal single-bucket admission of requests sent at `times` (epoch ms, any
 * order): the policy's pure model stepped over them. Run over the times the
 * requests were actually sent, it is the exact figure however late or unevenly
 * a loaded machine sent them.
 */
export function modelExpectedAt(rule: Rule, times: number[]): number {
  const { model } = policyOf(rule);
  let state: unknown;
  let allowed = 0;
  for (const at of [...times].sort((a, b) => a - b)) {
    const result = model.step(state, at, rule, 1);
    if (result.write) state = result.state;
    if (result.decision.allowed) allowed++;
  }
  return allowed;
}

/** The ideal single-bucket admission of the merged schedule, from the policy's pure model at exact times. */
export function modelExpected(rule: Rule, startEpochMs: number, ratePerTenant: number, durationMs: number): number {
  const { model } = policyOf(rule);
  const interval = 1000 / ratePerTenant;
  const total = Math.floor((durationMs / 1000) * ratePerTenant);
  let state: unknown;
  let allowed = 0;
  for (let n = 0; n < total; n++) {
    const result = model.step(state, startEpochMs + n * interval, rule, 1);
    if (result.write) state = result.state;
    if (result.decision.allowed) allowed++;
  }
  return allowed;
}
