// Cluster-wide accuracy of the decision faces: two Sluice processes (two
// "proxies' deciders") on one Redis, one bucket (token bucket, capacity 100,
// 100/s), 4× the limit offered evenly and alternately to both, through gRPC or
// through forward-auth. Expected: the policy's model over the instants the
// requests were sent (bench/lib/accuracy-plan.ts), target ±1 %.
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { Rule } from '../../src/policies/rule.js';
import { modelExpectedAt } from './accuracy-plan.js';
import { grpcAsker, grpcRequest } from './decision-load.js';
import { round } from './latency.js';

export interface DecisionAccuracyRow {
  face: 'gRPC ShouldRateLimit' | 'forward-auth /decide';
  instances: number;
  sent: number;
  allowed: number;
  expected: number;
  ratio: number;
  withinOnePercent: boolean;
  /** Script calls Redis ran during the run (INFO commandstats): fewer than sent = decided without Redis (negative cache, or the fallback when a call missed its deadline). */
  redisScriptCalls?: number;
}

type Decide = (instance: number) => Promise<boolean>;

/** Sends `rate`/s for `durationMs`, alternating instances; counts what was allowed and when each was sent. */
async function paced(decide: Decide, instances: number, rate: number, durationMs: number): Promise<{ sent: number[]; allowed: number }> {
  const sent: number[] = [];
  let allowed = 0;
  const pending: Promise<void>[] = [];
  const start = performance.now();
  while (performance.now() - start < durationMs) {
    while (sent.length * (1000 / rate) <= performance.now() - start) {
      sent.push(Date.now());
      pending.push(decide(sent.length % instances).then((ok) => void (ok && allowed++)));
    }
    await sleep(1);
  }
  await Promise.all(pending);
  return { sent, allowed };
}

function rowOf(face: DecisionAccuracyRow['face'], instances: number, rule: Rule, run: { sent: number[]; allowed: number }): DecisionAccuracyRow {
  const expected = modelExpectedAt(rule, run.sent);
  const ratio = round(run.allowed / expected, 4);
  return { face, instances, sent: run.sent.length, allowed: run.allowed, expected, ratio, withinOnePercent: Math.abs(run.allowed - expected) <= expected * 0.01 + 1 };
}

export async function grpcAccuracy(addresses: string[], rule: Rule, rate: number, durationMs: number): Promise<DecisionAccuracyRow> {
  const askers = addresses.map(grpcAsker);
  try {
    const key = `acc-grpc-${Date.now()}`;
    const run = await paced(async (i) => (await askers[i]!.ask(grpcRequest(key))).overall_code === 'OK', askers.length, rate, durationMs);
    return rowOf('gRPC ShouldRateLimit', addresses.length, rule, run);
  } finally {
    for (const asker of askers) asker.close();
  }
}

export async function forwardAuthAccuracy(decisionUrls: string[], rule: Rule, rate: number, durationMs: number): Promise<DecisionAccuracyRow> {
  const key = `acc-forward-auth-${Date.now()}`;
  const decide: Decide = async (i) => {
    const response = await request(`${decisionUrls[i]}/decide`, { headers: { 'x-api-key': key, 'x-original-method': 'GET', 'x-original-uri': '/orders' } });
    await response.body.dump();
    return response.statusCode === 200;
  };
  return rowOf('forward-auth /decide', decisionUrls.length, rule, await paced(decide, decisionUrls.length, rate, durationMs));
}
