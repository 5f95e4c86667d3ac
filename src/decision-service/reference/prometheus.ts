// USE_PROMETHEUS=true: the series the reference's built-in statsd→Prometheus
// mapper (src/stats/prom/default_mapper.yaml) makes, with its names and
// labels, so existing dashboards and alerts keep working. A statistics key
// `domain.a.b.c` is split on dots as the mapper splits it: two parts give
// {domain, key1}, three or more {domain, key1, key2}.
import { Counter, Histogram, Registry } from 'prom-client';
import type { DecisionObserver } from '../service.js';
import type { Outcome } from '../rls-status.js';
import { type HitCounts, hitCountsOf } from './stat-hits.js';

const STATS = ['total_hits', 'over_limit', 'near_limit', 'within_limit', 'shadow_mode'] as const;

/** The mapper's labels of a statistics key. */
export function labelsOfStatKey(statKey: string): Record<string, string> {
  const [domain = '', key1 = '', key2] = statKey.split('.');
  return key2 === undefined ? { domain, key1 } : { domain, key1, key2 };
}

export class ReferenceMetrics implements DecisionObserver {
  readonly registry = new Registry();
  private readonly hits: Record<keyof HitCounts, Counter>;
  private readonly errors: Counter;
  private readonly requests: Counter;
  private readonly responseTime: Histogram;
  private readonly loadSuccess: Counter;
  private readonly loadError: Counter;

  constructor(
    private readonly nearLimitRatio: number,
    private readonly responseTimeMs: boolean,
  ) {
    const registers = [this.registry];
    const perStat = (stat: string) => new Counter({ name: `ratelimit_service_rate_limit_${stat}`, help: `envoyproxy/ratelimit's ratelimit.service.rate_limit.<key>.${stat}`, labelNames: ['domain', 'key1', 'key2'], registers });
    this.hits = Object.fromEntries(STATS.map((stat) => [stat, perStat(stat)])) as Record<keyof HitCounts, Counter>;
    this.errors = new Counter({ name: 'ratelimit_service_should_rate_limit_error', help: 'ShouldRateLimit calls that failed, by kind', labelNames: ['err_type'], registers });
    this.requests = new Counter({ name: 'ratelimit_service_total_requests', help: 'gRPC calls, by method', labelNames: ['grpc_method'], registers });
    this.responseTime = new Histogram({ name: 'ratelimit_service_response_time_seconds', help: `gRPC call time, by method (${responseTimeMs ? 'milliseconds: PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS' : 'seconds'})`, labelNames: ['grpc_method'], registers });
    this.loadSuccess = new Counter({ name: 'ratelimit_service_config_load_success', help: 'config folder loads that succeeded', registers });
    this.loadError = new Counter({ name: 'ratelimit_service_config_load_error', help: 'config folder loads that failed (the last good config kept)', registers });
  }

  descriptors(outcomes: readonly Outcome[]): void {
    for (const outcome of outcomes) {
      const labels = labelsOfStatKey(outcome.plan.statKey());
      const counts = hitCountsOf(outcome, this.nearLimitRatio);
      // Every series of a key from its first use (0 included), as the reference creates them.
      for (const stat of STATS) this.hits[stat].inc(labels, counts[stat]);
    }
  }

  call(method: string, elapsedMs: number, errorType: string | undefined): void {
    this.requests.inc({ grpc_method: method });
    this.responseTime.observe({ grpc_method: method }, this.responseTimeMs ? elapsedMs : elapsedMs / 1000);
    if (errorType !== undefined) this.errors.inc({ err_type: errorType });
  }

  configLoaded(ok: boolean): void {
    (ok ? this.loadSuccess : this.loadError).inc();
  }
}
