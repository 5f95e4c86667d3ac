// Wiring for `sluice start`: open the rule store the environment asks for, load
// the cache, and close both. PostgreSQL when SLUICE_DATABASE_URL is set, the
// embedded SQLite store in SLUICE_DATA_DIR otherwise.
import { join, resolve } from 'node:path';
import type { Rule } from '../policies/rule.js';
import { EmbeddedRuleStore } from './embedded/store.js';
import { type RulesLogger, stderrLogger } from './logger.js';
import type { PgConnection } from './postgres/connection.js';
import { PostgresRuleStore } from './postgres/store.js';
import { waitAtMost } from './postgres/timed.js';
import { RuleCache } from './cache/rule-cache.js';
import { SNAPSHOT_FILE } from './cache/snapshot-file.js';
import type { RuleStore, SeedRule } from './store.js';

export interface RuleStoreOptions {
  /** SLUICE_DATABASE_URL: PostgreSQL when set. */
  databaseUrl?: string | undefined;
  /** database.tls and database.passwordFile's password (PostgreSQL only). */
  connection?: PgConnection | undefined;
  /** SLUICE_DATA_DIR (default ./data): the embedded store, and PostgreSQL's rules snapshot. */
  dataDir?: string | undefined;
  /** The config file's `rules:`, written to the store on its first start only. */
  seedRules?: readonly SeedRule[];
  logger?: RulesLogger;
  /** The config's `database:` timeouts (PostgreSQL only); defaults when absent. */
  timeouts?: DatabaseTimeouts;
}

export interface DatabaseTimeouts {
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
  maxClockSkewMs?: number;
}

export interface RulesRuntimeOptions extends RuleStoreOptions {
  /** The config's default rule, for tenant × route pairs no rule matches. */
  defaultRule: Rule;
  /** Full reload period (default 30 s). */
  refreshIntervalMs?: number;
}

export interface RulesRuntime {
  store: RuleStore;
  cache: RuleCache;
  close(): Promise<void>;
}

export function dataDirOf(options: Pick<RuleStoreOptions, 'dataDir'>): string {
  return resolve(options.dataDir ?? process.env.SLUICE_DATA_DIR ?? './data');
}

/** Opens (does not yet connect to) the store; the embedded one takes the data dir's lock now. */
export function openRuleStore(options: RuleStoreOptions): RuleStore {
  const logger = options.logger ?? stderrLogger;
  const seedRules = options.seedRules ?? [];
  if (options.databaseUrl) return new PostgresRuleStore({ connectionString: options.databaseUrl, seedRules, logger, ...options.timeouts, connection: options.connection });
  return new EmbeddedRuleStore({ dataDir: dataDirOf(options), seedRules, logger });
}

/** Opens the store and loads every rule and key; throws a clear SluiceError when it cannot. */
export async function startRules(options: RulesRuntimeOptions): Promise<RulesRuntime> {
  const store = openRuleStore(options);
  const cache = new RuleCache({
    store,
    defaultRule: options.defaultRule,
    refreshIntervalMs: options.refreshIntervalMs ?? 30_000,
    // Only PostgreSQL can be out of reach; the embedded file is read directly.
    snapshotPath: store.kind === 'postgres' ? join(dataDirOf(options), SNAPSHOT_FILE) : undefined,
    logger: options.logger ?? stderrLogger,
  });
  try {
    await cache.start();
  } catch (error) {
    await cache.close();
    await store.close();
    throw error;
  }
  return {
    store,
    cache,
    async close() {
      // A full load in flight on a frozen database may take 10 × statementTimeoutMs to fail: shutdown does not wait for it.
      await waitAtMost(cache.close(), options.timeouts?.statementTimeoutMs ?? 3000);
      await store.close();
    },
  };
}
