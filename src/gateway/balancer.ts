// A route's upstream instances: smooth weighted round robin (nginx's: each
// pick adds every instance's weight to its score and takes the highest, so a
// 2:1 pair goes a, b, a, not a, a, b), and passive health: an instance that
// refuses connections or times out is ejected for a while (1 s, doubling up
// to 30 s while it keeps failing), then tried again by the next request that
// comes; one success brings it back. With the route's healthCheck an instance
// whose health path fails is out until a check passes (health-check.ts). When
// every instance is out the one whose ejection ends first is used anyway: a
// guess beats a certain 502.
import type { Pool } from 'undici';
import type { UpstreamInstance } from '../config/route-forwarding.js';
import { type InstanceMetrics, instanceMetrics, upstreamEjections } from '../metrics/upstreams.js';

const FIRST_EJECTION_MS = 1_000;
const MAX_EJECTION_MS = 30_000;

export interface Instance {
  readonly url: string;
  readonly pool: Pool;
  readonly weight: number;
  readonly metrics: InstanceMetrics;
}

interface InstanceState extends Instance {
  score: number;
  failures: number;
  ejectedUntil: number;
  /** False while the route's active health check says so (healthCheck.path answered badly or not at all). */
  healthy: boolean;
}

export class Balancer {
  private readonly instances: InstanceState[];

  constructor(
    private readonly route: string,
    instances: readonly UpstreamInstance[],
    pool: (origin: string) => Pool,
  ) {
    this.instances = instances.map((instance) => ({ url: instance.url, weight: instance.weight, pool: pool(instance.url), metrics: instanceMetrics(route, instance.url), score: 0, failures: 0, ejectedUntil: 0, healthy: true }));
  }

  get size(): number {
    return this.instances.length;
  }

  /** The next instance to send to; `except` (one that just failed) is skipped when another exists. */
  pick(except?: Instance): Instance {
    const only = this.instances[0]!;
    if (this.instances.length === 1) return only;
    const now = Date.now();
    let best: InstanceState | undefined;
    let total = 0;
    for (const instance of this.instances) {
      if (instance === except || instance.ejectedUntil > now || !instance.healthy) continue; // out of the rotation: its score waits
      instance.score += instance.weight;
      total += instance.weight;
      if (best === undefined || instance.score > best.score) best = instance;
    }
    if (best === undefined) return this.lastResort(except);
    best.score -= total;
    return best;
  }

  /** Every instance is ejected (or the one left just failed): the one whose ejection ends first. */
  private lastResort(except?: Instance): Instance {
    let soonest: InstanceState | undefined;
    for (const instance of this.instances) {
      if (instance === except) continue;
      if (soonest === undefined || instance.ejectedUntil < soonest.ejectedUntil) soonest = instance;
    }
    return soonest ?? this.instances[0]!;
  }

  /** The instance could not be reached (refused, reset before an answer, connect timeout): ejected. */
  failed(instance: Instance): void {
    const state = instance as InstanceState;
    if (this.instances.length === 1) return; // nowhere else to send: ejecting would change nothing
    state.failures++;
    state.ejectedUntil = Date.now() + Math.min(MAX_EJECTION_MS, FIRST_EJECTION_MS * 2 ** (state.failures - 1));
    upstreamEjections.labels(this.route, instance.url).inc();
    instance.metrics.tally.ejections++;
  }

  succeeded(instance: Instance): void {
    const state = instance as InstanceState;
    if (state.failures === 0) return;
    state.failures = 0;
    state.ejectedUntil = 0;
  }

  /** The instances, for the active health check. */
  get all(): readonly Instance[] {
    return this.instances;
  }

  /** The active health check's verdict: an unhealthy instance gets no traffic until a check passes. */
  setHealthy(instance: Instance, healthy: boolean): void {
    const state = instance as InstanceState;
    if (state.healthy && !healthy) {
      upstreamEjections.labels(this.route, instance.url).inc();
      instance.metrics.tally.ejections++;
    }
    state.healthy = healthy;
    if (healthy) this.succeeded(instance);
  }

  /** Which instances are in service now. */
  health(): { url: string; ejected: boolean; healthy: boolean }[] {
    const now = Date.now();
    return this.instances.map((instance) => ({ url: instance.url, ejected: instance.ejectedUntil > now, healthy: instance.healthy }));
  }
}
