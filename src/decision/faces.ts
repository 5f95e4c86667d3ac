// What the decision service's listeners decide with, built from one config:
// the Envoy decider (domains, header options) and forward-auth (routes, their
// limits). A reload builds new ones and swaps them whole; the listeners read
// them per request, so no connection is dropped.
import type { SluiceConfig } from '../config/types.js';
import { ForwardAuth } from './forward-auth.js';
import { RateLimitDecider } from './rls.js';
import type { DecisionDeps } from './deps.js';

export interface DecisionFaces {
  decider: RateLimitDecider;
  /** Undefined without routes (`sluice ratelimit`): /decide is then a 404, as on the reference, which has no such endpoint. */
  forwardAuth: ForwardAuth | undefined;
}

export function buildFaces(config: SluiceConfig, deps: DecisionDeps): DecisionFaces {
  return {
    decider: new RateLimitDecider(config.decisionService.domains, deps.engine, config.headers, { shadowMode: config.decisionService.shadowMode, observe: deps.observer ? (outcomes) => deps.observer?.descriptors(outcomes) : undefined }),
    forwardAuth: config.routes.length === 0 ? undefined : new ForwardAuth({ config, ...deps }),
  };
}
