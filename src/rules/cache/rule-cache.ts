// The rule cache: every rule and active key in memory, as an immutable RuleSet
// swapped whole. Lookups are O(1) map reads with no I/O. Changes arrive through
// the store's `watch` and are applied in small batches (well under a second);
// a full reload runs every `refreshIntervalMs` as a safety net. When the store
// is unreachable the last set keeps serving; a snapshot file lets an instance
// start without the store at all.
import type { Rule } from '../../policies/rule.js';
import type { ListSet } from '../../lists/list-set.js';
import { hashApiKeyHex } from '../keys.js';
import type { StoredListEntry } from '../list-entries.js';
import { errorMessage, type RulesLogger, stderrLogger } from '../logger.js';
import type { OverrideSet } from '../override-set.js';
import { PendingChanges } from './pending-changes.js';
import { assignmentKey, buildPlanSet, planOf, planRule } from '../plan-set.js';
import { applyChanges, buildRuleSet, defaultResolved, lookupWithPlan, type RuleSet } from '../rule-set.js';
import { setFromSnapshot, SnapshotWriter } from './cache-snapshot.js';
import type { RuleStore, StoreChange } from '../store.js';
import type { KeyOwner, ResolveContext, ResolvedRule, RuleResolver, StoredRule, TenantResolver } from '../types.js';

export interface RuleCacheOptions {
  store: RuleStore;
  /** The rule for a tenant × route no stored rule matches (config `defaults`). */
  defaultRule: Rule;
  /** Full reload period, the safety net under notifications. Default 30 s. */
  refreshIntervalMs?: number;
  /** Where to keep the last good rule set (e.g. `${SLUICE_DATA_DIR}/rules-snapshot.json`); none when absent. */
  snapshotPath?: string;
  logger?: RulesLogger;
  /** More changed entries than this in one batch → one full reload instead. */
  maxBatch?: number;
}

export interface RuleCacheStatus {
  /** A rule set is in memory (from the store or the snapshot file). */
  loaded: boolean;
  storeReachable: boolean;
  /** Where the rules in memory came from. */
  source: 'store' | 'snapshot' | 'none';
  /** ISO time of the last successful read of the store. */
  lastSync: string | undefined;
  rules: number;
  keys: number;
  overrides: number;
  /** Plans in memory, and tenants and keys assigned one. */
  plans: number;
  assignments: number;
  /** Allow and deny list entries in memory (expired ones included until deleted). */
  lists: number;
  /** The rule-set version this cache has applied (migrations/006), and its store's id; undefined until known. */
  version: number | undefined;
  storeId: string | undefined;
}

const MAX_KEY_LENGTH = 512;
const EMPTY: RuleSet = buildRuleSet([], []);

export class RuleCache implements RuleResolver, TenantResolver {
  private set: RuleSet = EMPTY;
  private readonly fallback: ResolvedRule;
  private readonly logger: RulesLogger;
  private source: RuleCacheStatus['source'] = 'none';
  private reachable = false;
  private lastSync: string | undefined;
  /** The rule-set version applied, and the newest heard announced (applied once every change heard before it is). */
  private appliedVersion: number | undefined;
  private heardVersion = 0;
  private storeId: string | undefined;
  private readonly pending = new PendingChanges();
  private running: Promise<void> | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = 250;
  private unwatch: (() => void) | undefined;
  private readonly snapshot: SnapshotWriter | undefined;
  private closed = false;

  constructor(private readonly options: RuleCacheOptions) {
    this.fallback = defaultResolved(options.defaultRule);
    this.logger = options.logger ?? stderrLogger;
    const path = options.snapshotPath;
    this.snapshot = path ? new SnapshotWriter(path, options.store.location, () => this.set, this.logger) : undefined;
  }

  /** Listens for changes, then loads everything; falls back to the snapshot file, or throws a clear error. */
  async start(): Promise<void> {
    this.unwatch = await this.options.store.watch((change) => this.onChange(change));
    try {
      await this.loadAll();
    } catch (error) {
      this.startFromSnapshot(error);
      this.scheduleRetry();
    }
    const period = this.options.refreshIntervalMs ?? 30_000;
    this.refreshTimer = setInterval(() => this.requestFull(), period);
    this.refreshTimer.unref();
  }

  resolve(tenant: string, route: string, context?: ResolveContext): ResolvedRule {
    return lookupWithPlan(this.set, tenant, route, context) ?? this.fallback;
  }

  planLimit(tenant: string | undefined, limitId: string, plan: string | undefined): ResolvedRule | undefined {
    return planOf(this.set.plans, tenant, plan)?.limits.get(limitId);
  }

  planRule(plan: string, route: string, limitId: string | undefined): ResolvedRule | undefined {
    const found = this.set.plans.plans.get(plan);
    return found && planRule(found, route, limitId);
  }

  /** The key's tenant, with the key's own plan when it has one (it comes before the tenant's). */
  identityFor(apiKey: string): KeyOwner | undefined {
    if (typeof apiKey !== 'string' || apiKey.length === 0 || apiKey.length > MAX_KEY_LENGTH) return undefined;
    return this.identityForHash(hashApiKeyHex(apiKey));
  }

  /** identityFor by the key's hex SHA-256. */
  identityForHash(keyHash: string): KeyOwner | undefined {
    const entry = this.set.keys.get(keyHash);
    if (!entry) return undefined;
    const plan = this.set.plans.assignments.get(assignmentKey('key', entry.id));
    return plan === undefined ? { tenant: entry.tenant } : { tenant: entry.tenant, plan };
  }

  overrides(): OverrideSet {
    return this.set.overrides;
  }

  /** The store's allow and deny lists, compiled; a new set after each change. */
  lists(): ListSet {
    return this.set.lists.set;
  }

  /** The store's list entries in memory. */
  listEntries(): StoredListEntry[] {
    return [...this.set.lists.entries.values()];
  }

  tenantFor(apiKey: string): string | undefined {
    if (typeof apiKey !== 'string' || apiKey.length === 0 || apiKey.length > MAX_KEY_LENGTH) return undefined;
    return this.tenantForHash(hashApiKeyHex(apiKey));
  }

  /** The tenant of the active key whose hex SHA-256 is `keyHash`. */
  tenantForHash(keyHash: string): string | undefined {
    return this.set.keys.get(keyHash)?.tenant;
  }

  /** The stored rules in memory, e.g. for the admin API when the store is down. */
  rules(): StoredRule[] {
    return [...this.set.stored.values()];
  }

  status(): RuleCacheStatus {
    return {
      loaded: this.source !== 'none',
      storeReachable: this.reachable,
      source: this.source,
      lastSync: this.lastSync,
      rules: this.set.rules.size,
      keys: this.set.keys.size,
      overrides: this.set.overrides.stored.size,
      plans: this.set.plans.plans.size,
      assignments: this.set.plans.assignments.size,
      lists: this.set.lists.entries.size,
      version: this.appliedVersion,
      storeId: this.storeId,
    };
  }

  /** Reloads everything now; resolves when done (or failed: see status()). */
  refresh(): Promise<void> {
    this.requestFull();
    return this.running ?? Promise.resolve();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.refreshTimer);
    clearTimeout(this.retryTimer);
    this.unwatch?.();
    await this.running?.catch(() => {});
    await this.snapshot?.settled();
  }

  private onChange(change: StoreChange): void {
    if (change.kind === 'disconnected') {
      this.markUnreachable(new Error(`change notifications lost: ${change.error}`));
      return;
    }
    if (change.kind === 'version') this.heardVersion = Math.max(this.heardVersion, change.version);
    else this.pending.add(change);
    this.kick();
  }

  private requestFull(): void {
    this.pending.full = true;
    this.kick();
  }

  /** One sync at a time: a full reload or a batch of changes, until nothing is pending. */
  private kick(): void {
    if (this.running || this.closed) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
    });
  }

  private async drain(): Promise<void> {
    // Let a burst of notifications gather into one batch.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (!this.closed && (this.pending.full || this.pending.size > 0)) {
        if (this.pending.full || this.pending.size > (this.options.maxBatch ?? 200)) {
          // A full load reads after every pending change committed: it covers them all.
          this.pending.clear();
          await this.loadAll();
        } else {
          this.swap(applyChanges(this.set, await this.pending.fetch(this.options.store), this.logger), 'store');
        }
      }
      // Nothing pending: every change announced before the newest version heard is applied.
      if (!this.closed && this.heardVersion > 0) this.reachedVersion(this.heardVersion);
    } catch (error) {
      // Retry everything once the store answers again; meanwhile the last set serves.
      this.pending.full = true;
      this.markUnreachable(error);
      this.scheduleRetry();
    }
  }

  private async loadAll(): Promise<void> {
    const { store } = this.options;
    // Read before the rows: what they hold is at least this version (later changes are announced).
    const version = await store.ruleSetVersion?.();
    const [rules, keys, overrides, plans, assignments, lists] = await Promise.all([
      store.listRules(),
      store.listActiveKeyHashes(),
      store.overrides.list(),
      store.plans.list(),
      store.plans.listAssignments(),
      store.lists.list(),
    ]);
    this.swap(buildRuleSet(rules, keys, { overrides, logger: this.logger, plans: buildPlanSet(plans, assignments), lists }), 'store');
    if (version === undefined) return;
    this.storeId = version.storeId;
    this.reachedVersion(version.version);
  }

  private reachedVersion(version: number): void {
    if (version > (this.appliedVersion ?? -1)) this.appliedVersion = version;
  }

  private swap(set: RuleSet, source: 'store'): void {
    this.set = set;
    this.source = source;
    this.lastSync = new Date().toISOString();
    this.retryMs = 250;
    if (!this.reachable && this.source === 'store') this.logger.info({ store: this.options.store.location, rules: set.rules.size }, 'rule store reachable: rules in sync');
    this.reachable = true;
    this.snapshot?.save();
  }

  private markUnreachable(error: unknown): void {
    if (this.reachable) {
      this.logger.error(
        { store: this.options.store.location, err: errorMessage(error), rules: this.set.rules.size },
        'rule store unreachable: serving the last loaded rules until it returns',
      );
    }
    this.reachable = false;
  }

  private scheduleRetry(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.requestFull();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, 5000);
  }

  private startFromSnapshot(error: unknown): void {
    const path = this.options.snapshotPath;
    const snapshot = setFromSnapshot(path, error);
    this.set = snapshot.set;
    this.source = 'snapshot';
    this.reachable = false;
    this.logger.error(
      { store: this.options.store.location, err: errorMessage(error), snapshot: path, savedAt: snapshot.savedAt, rules: this.set.rules.size },
      'RULE STORE UNREACHABLE AT START: serving rules and keys from the snapshot file; changes made since it was saved are not applied until the store returns',
    );
  }
}
