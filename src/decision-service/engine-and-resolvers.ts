// What the decision service's deciders are handed: the engine, the rule and
// tenant resolvers, the logger, and who is told of each call.
import type { Logger } from 'pino';
import type { Engine } from '../limiter/engine/engine.js';
import type { ListSet } from '../lists/list-set.js';
import type { RuleResolver, TenantResolver } from '../rules/types.js';
import type { Outcome } from './rls-status.js';
import type { Tracing } from '../tracing/types.js';

export interface DecisionDeps {
  engine: Engine;
  rules: RuleResolver;
  tenants: TenantResolver;
  logger: Logger;
  /** The rule store's allow and deny lists, applied beside the config file's; absent: the config file's only. */
  storedLists?: (() => ListSet) | undefined;
  /** Told of every gRPC call and every limited descriptor (the reference's Prometheus series). */
  observer?: DecisionObserver;
  /** A span per ShouldRateLimit and /decide, /json call (docs/observability.md); absent: tracing off. */
  tracing?: Tracing | undefined;
}

export interface DecisionObserver {
  descriptors(outcomes: readonly Outcome[]): void;
  /** One ShouldRateLimit call over gRPC: how long it took, and its error kind if it failed. */
  call(method: string, elapsedMs: number, errorType: string | undefined): void;
}
