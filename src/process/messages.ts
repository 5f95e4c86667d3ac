// The messages between the primary and its gateway workers (node:cluster IPC,
// `serialization: 'advanced'`, so values arrive as sent). Each carries
// `sluice` so prom-client's own metric messages pass by untouched.
import type { SluiceConfig } from '../config/types.js';
import type { EngineHealth } from '../limiter/engine/engine.js';
import type { StoreChange } from '../rules/store.js';

/** Primary → worker. */
export type ToWorker =
  | { sluice: 'config'; config: SluiceConfig; seq: number; store?: StoreIdentity }
  | { sluice: 'rules-change'; change: StoreChange }
  | { sluice: 'rules-reply'; id: number; value?: unknown; error?: RemoteError }
  | { sluice: 'drain' };

/** Worker → primary. */
export type FromWorker =
  | { sluice: 'hello' }
  | { sluice: 'ready'; url: string }
  | { sluice: 'configured'; seq: number; error?: string }
  | { sluice: 'rules-call'; id: number; method: RuleStoreMethod; args: unknown[] }
  | { sluice: 'health'; health: EngineHealth };

/** Which rule store the primary holds: a worker's rule cache reports it as its own. */
export interface StoreIdentity {
  kind: 'postgres' | 'embedded';
  location: string;
}

/** A rule store failure as the worker re-raises it: the admin API's code and field survive. */
export interface RemoteError {
  message: string;
  code?: string;
  field?: string;
}

/** What a worker's rule cache may ask the primary's store. */
export const RULE_STORE_METHODS = ['listRules', 'getRule', 'getKey', 'listKeys', 'listActiveKeyHashes', 'listOverrides', 'getOverride', 'ruleSetVersion', 'listPlans', 'getPlan', 'listAssignments', 'getAssignment', 'listListEntries', 'getListEntry'] as const;
export type RuleStoreMethod = (typeof RULE_STORE_METHODS)[number];

export function isSluiceMessage<T extends { sluice: string }>(message: unknown): message is T {
  return typeof message === 'object' && message !== null && typeof (message as { sluice?: unknown }).sluice === 'string';
}
