// The rule store: where rules and API keys are kept (PostgreSQL or the embedded
// SQLite file). The hot path never reads it: the rule cache loads it into memory
// and listens to `watch` for changes. A rule is parsed once, where it enters
// (the admin API, the CLI, the config file), and reaches a store as a Rule; a
// store checks ids, writes each change in one transaction (nothing is ever
// partly written) and parses every row it reads back (rule-rows.ts), since a
// database can hold anything.
import type { Rule } from '../policies/rule.js';
import type { ListEntryStore } from './list-entries.js';
import type { PlanStore, PlanSubject } from './plans.js';
import type { TeamStore } from './admin/tokens-and-audit.js';
import type { StoredOverride, StoredRule } from './types.js';

export interface ApiKeyInfo {
  id: string;
  tenant: string;
  createdAt: string; // ISO timestamp
  revokedAt: string | undefined; // ISO timestamp, undefined while active
}

/** A key as the cache needs it: only the SHA-256 (hex) of the clear key. */
export interface ApiKeyRecord extends ApiKeyInfo {
  hash: string;
}

export interface CreatedKey {
  id: string;
  /** The clear key: shown once, never stored. */
  key: string;
  tenant: string;
  createdAt: string;
}

/**
 * What changed. `reload` means "anything may have changed" (a bulk edit, or
 * notifications may have been lost while the listener was reconnecting);
 * `disconnected` means change notifications are not arriving for now.
 */
export type StoreChange =
  | { kind: 'rule'; tenant: string; route: string }
  | { kind: 'key'; id: string }
  | { kind: 'override'; limitId: string; selector: string }
  /** A plan was made, deleted, or one of its limits changed: the plan is read again whole (one plan, never its tenants). */
  | { kind: 'plan'; plan: string }
  /** A tenant or key moved to another plan, or off its plan. */
  | { kind: 'assignment'; subject: PlanSubject; id: string }
  /** An allow or deny list entry was added or deleted. */
  | { kind: 'list'; id: string }
  | { kind: 'reload' }
  /** The rule-set version the changes announced before it bring the store to (migrations/006). */
  | { kind: 'version'; version: number }
  | { kind: 'disconnected'; error: string };

export interface RuleSetVersion {
  version: number;
  /** Random, made with the store: instances on the same store have the same id, however they reach it. */
  storeId: string;
}

/** A rule from the config file (parsed when it was loaded), written to an empty store on its first start. */
export interface SeedRule {
  tenant: string;
  route: string;
  rule: Rule;
}

export interface RuleFilter {
  tenant?: string;
  /**
   * Someone waits on the answer (the admin API): give up after the store's
   * normal timeout. Without it an unfiltered listing is a full load (the rule
   * cache's, maybe 100,000s of rows) and may take longer.
   */
  interactive?: boolean;
}

/**
 * Per-key overrides of a limit's rule. Ids and selectors are checked (a limit
 * id need not be in this instance's config: instances with other configs share
 * the store); `selector` must be canonical (parseSelector) and `rule` parsed.
 */
export interface OverrideStore {
  /** Every override, or one limit's; `interactive` as for rules. */
  list(filter?: { limitId?: string; interactive?: boolean }): Promise<StoredOverride[]>;
  get(limitId: string, selector: string): Promise<StoredOverride | undefined>;
  put(limitId: string, selector: string, rule: Rule): Promise<StoredOverride>;
  /** Whether an override was there to delete. */
  delete(limitId: string, selector: string): Promise<boolean>;
}

export interface RuleStore {
  readonly kind: 'postgres' | 'embedded';
  readonly overrides: OverrideStore;
  /** Plans, their limits and who is on which (plans.ts). */
  readonly plans: PlanStore;
  /** Allow and deny list entries (list-entries.ts). */
  readonly lists: ListEntryStore;
  /** Named admin tokens and the audit log (admin/tokens-and-audit.ts). */
  readonly team: TeamStore;
  /** Where the store lives, for logs and errors (never a password). */
  readonly location: string;
  /** How long one admin call may wait on the store, all its calls together (admin/call-scope.ts); absent for a local store. */
  readonly callTimeoutMs?: number;

  listRules(filter?: RuleFilter): Promise<StoredRule[]>;
  getRule(tenant: string, route: string): Promise<StoredRule | undefined>;
  /** Inserts or replaces the rule of tenant × route; `rule` is already parsed (parseRule). */
  putRule(tenant: string, route: string, rule: Rule): Promise<StoredRule>;
  /** Whether a rule was there to delete. */
  deleteRule(tenant: string, route: string): Promise<boolean>;

  /** A random 32-byte base64url key for `tenant`; only its SHA-256 is stored. */
  createKey(tenant: string): Promise<CreatedKey>;
  listKeys(tenant?: string): Promise<ApiKeyInfo[]>;
  getKey(id: string): Promise<ApiKeyRecord | undefined>;
  /** Marks the key revoked (idempotent); undefined when no key has this id. */
  revokeKey(id: string): Promise<ApiKeyInfo | undefined>;
  listActiveKeyHashes(): Promise<ApiKeyRecord[]>;

  /**
   * Calls `onChange` after each committed change, from any instance. Resolves,
   * with an unsubscribe function, once changes are being listened for (or the
   * first attempt failed: a later success then sends `reload`).
   */
  watch(onChange: (change: StoreChange) => void): Promise<() => void>;
  /**
   * Resolves when the store answers a trivial query within `timeoutMs`, throws
   * (a SluiceError) otherwise. For /readyz; stores that cannot be out of reach omit it.
   */
  ping?(timeoutMs: number): Promise<void>;
  /** The rule-set version now (migrations/006), raised by every change to rules, overrides, keys and tokens, and the id naming this store. */
  ruleSetVersion?(): Promise<RuleSetVersion>;
  close(): Promise<void>;
}
