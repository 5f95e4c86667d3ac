// The embedded rule store: one SQLite file (WAL mode) in SLUICE_DATA_DIR, for a
// single gateway without PostgreSQL. Same columns and CHECKs as the PostgreSQL
// schema (schema.ts), same row mapping (rule-rows.ts); changes are
// announced in-process, since only this process writes.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { assertValidId } from '../../core/ids.js';
import type { Rule } from '../../policies/rule.js';
import { type DirLock, lockDataDir } from './dir-lock.js';
import { EmbeddedOverrideStore } from './overrides.js';
import { EmbeddedListStore } from './lists.js';
import { EmbeddedPlanStore } from './plans.js';
import { EmbeddedTeamStore } from './tokens-and-audit.js';
import { migrateEmbedded } from './schema.js';
import { assertValidKeyId, hashApiKey, newApiKey, newKeyId } from '../keys.js';
import { type RulesLogger, silentLogger } from '../logger.js';
import { assertRuleTarget } from '../rule-columns.js';
import { type KeyRow, RULE_COLUMNS, RULE_WRITE_COLUMNS, type RuleRow, ruleValues, seededMessage, seedValues, storedFromRow, storedFromWrite, toKeyInfo, toKeyRecord, updateRuleColumns } from '../rule-rows.js';
import type { ApiKeyInfo, ApiKeyRecord, CreatedKey, RuleFilter, RuleSetVersion, RuleStore, SeedRule, StoreChange } from '../store.js';
import type { StoredRule } from '../types.js';

export interface EmbeddedStoreOptions {
  /** SLUICE_DATA_DIR; created if missing. */
  dataDir: string;
  seedRules?: readonly SeedRule[];
  logger?: RulesLogger;
}

const KEY_COLUMNS = 'id, tenant_id, created_at, revoked_at, lower(hex(key_hash)) AS hash';

/** SQLite keeps a boolean as 0/1 and JSON as text. */
function sqliteValues([tenant, route, policy, capacity, refill, params, shadow]: ReturnType<typeof ruleValues>): unknown[] {
  return [tenant, route, policy, capacity, refill, JSON.stringify(params), shadow ? 1 : 0];
}

export class EmbeddedRuleStore implements RuleStore {
  readonly kind = 'embedded';
  readonly location: string;
  readonly overrides: EmbeddedOverrideStore;
  readonly plans: EmbeddedPlanStore;
  readonly lists: EmbeddedListStore;
  readonly team: EmbeddedTeamStore;
  private readonly db: Database.Database;
  private readonly lock: DirLock;
  private readonly logger: RulesLogger;
  private readonly watchers = new Set<(change: StoreChange) => void>();
  private closed = false;

  constructor(options: EmbeddedStoreOptions) {
    const dir = resolve(options.dataDir);
    mkdirSync(dir, { recursive: true });
    this.logger = options.logger ?? silentLogger;
    this.lock = lockDataDir(dir);
    const file = join(dir, 'rules.sqlite');
    this.location = `embedded ${file}`;
    try {
      this.db = new Database(file);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('busy_timeout = 5000');
      migrateEmbedded(this.db, this.logger);
      this.seed(options.seedRules ?? []);
      this.team = new EmbeddedTeamStore(this.db, () => this.emit()); // reads SLUICE_AUDIT_KEEP_*: a bad value releases the lock too
    } catch (error) {
      this.lock.release();
      throw error;
    }
    const change = <T>(work: () => T): T => this.team.change(work);
    const access = { db: this.db, emit: (event: StoreChange) => this.emit(event), change, logger: this.logger, location: this.location };
    this.overrides = new EmbeddedOverrideStore(access);
    this.plans = new EmbeddedPlanStore(access);
    this.lists = new EmbeddedListStore(access);
  }

  /** The config's rules (parsed when the config was loaded), written on the first start only: afterwards the admin API owns them. */
  private seed(seeds: readonly SeedRule[]): void {
    const insert = this.db.prepare(
      `INSERT INTO rate_limit_rule (${RULE_WRITE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, route_id) DO NOTHING`,
    );
    const claimed = this.db.transaction(() => {
      const claim = this.db.prepare("INSERT OR IGNORE INTO sluice_meta (key, value) VALUES ('seeded', ?)").run(new Date().toISOString());
      if (claim.changes !== 1) return false;
      for (const values of seedValues(seeds)) insert.run(...sqliteValues(values));
      return true;
    })();
    if (claimed) seededMessage(this.logger, seeds.length, this.location);
  }

  /** A change, then the version it brought (read now, right after the write; 006's NOTIFY on PostgreSQL). */
  private emit(change?: StoreChange): void {
    const version: StoreChange = { kind: 'version', version: this.currentVersion().version };
    // After the write returns, like a NOTIFY after commit.
    queueMicrotask(() => {
      for (const watcher of this.watchers) {
        if (change) watcher(change);
        watcher(version);
      }
    });
  }

  private currentVersion(): RuleSetVersion {
    const row = this.db.prepare('SELECT version, store_id FROM rule_set_version').get() as { version: number; store_id: string } | undefined;
    return { version: row?.version ?? 0, storeId: row?.store_id ?? '' };
  }

  async ruleSetVersion(): Promise<RuleSetVersion> {
    return this.currentVersion();
  }

  async listRules(filter: RuleFilter = {}): Promise<StoredRule[]> {
    if (filter.tenant !== undefined) assertRuleTarget(filter.tenant, '*');
    const rows =
      filter.tenant === undefined
        ? this.db.prepare(`SELECT ${RULE_COLUMNS} FROM rate_limit_rule ORDER BY tenant_id, route_id`).all()
        : this.db.prepare(`SELECT ${RULE_COLUMNS} FROM rate_limit_rule WHERE tenant_id = ? ORDER BY route_id`).all(filter.tenant);
    return (rows as RuleRow[]).flatMap((row) => storedFromRow(row, this.logger, this.location));
  }

  async getRule(tenant: string, route: string): Promise<StoredRule | undefined> {
    assertRuleTarget(tenant, route);
    const row = this.db.prepare(`SELECT ${RULE_COLUMNS} FROM rate_limit_rule WHERE tenant_id = ? AND route_id = ?`).get(tenant, route);
    return row ? storedFromRow(row as RuleRow, this.logger, this.location)[0] : undefined;
  }

  /** `rule` was parsed at the boundary (admin API, config): written as is. */
  async putRule(tenant: string, route: string, rule: Rule): Promise<StoredRule> {
    assertRuleTarget(tenant, route);
    const updatedAt = new Date().toISOString();
    const stored = this.team.change(() => {
      this.db
        .prepare(
          `INSERT INTO rate_limit_rule (${RULE_WRITE_COLUMNS}, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (tenant_id, route_id) DO UPDATE SET ${updateRuleColumns('excluded.updated_at')}`,
        )
        .run(...sqliteValues(ruleValues(tenant, route, rule)), updatedAt);
      return storedFromWrite(tenant, route, rule, updatedAt);
    });
    this.emit({ kind: 'rule', tenant, route });
    return stored;
  }

  async deleteRule(tenant: string, route: string): Promise<boolean> {
    assertRuleTarget(tenant, route);
    const deleted = this.team.change(() => this.db.prepare('DELETE FROM rate_limit_rule WHERE tenant_id = ? AND route_id = ?').run(tenant, route).changes === 1);
    if (deleted) this.emit({ kind: 'rule', tenant, route });
    return deleted;
  }

  async createKey(tenant: string): Promise<CreatedKey> {
    assertValidId(tenant, 'tenant');
    const key = newApiKey();
    const id = newKeyId();
    const createdAt = new Date().toISOString();
    const created = this.team.change(() => {
      this.db.prepare('INSERT INTO api_key (id, key_hash, tenant_id, created_at) VALUES (?, ?, ?, ?)').run(id, hashApiKey(key), tenant, createdAt);
      return { id, key, tenant, createdAt };
    });
    this.emit({ kind: 'key', id });
    return created;
  }

  async listKeys(tenant?: string): Promise<ApiKeyInfo[]> {
    if (tenant !== undefined) assertValidId(tenant, 'tenant');
    const rows =
      tenant === undefined
        ? this.db.prepare(`SELECT ${KEY_COLUMNS} FROM api_key ORDER BY created_at, id`).all()
        : this.db.prepare(`SELECT ${KEY_COLUMNS} FROM api_key WHERE tenant_id = ? ORDER BY created_at, id`).all(tenant);
    return (rows as KeyRow[]).map(toKeyInfo);
  }

  async getKey(id: string): Promise<ApiKeyRecord | undefined> {
    assertValidKeyId(id);
    const row = this.db.prepare(`SELECT ${KEY_COLUMNS} FROM api_key WHERE id = ?`).get(id) as KeyRow | undefined;
    return row ? toKeyRecord(row) : undefined;
  }

  async revokeKey(id: string): Promise<ApiKeyInfo | undefined> {
    assertValidKeyId(id);
    let changed = false;
    const info = this.team.change(() => {
      changed = this.db.prepare('UPDATE api_key SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(new Date().toISOString(), id).changes === 1;
      const row = this.db.prepare(`SELECT ${KEY_COLUMNS} FROM api_key WHERE id = ?`).get(id) as KeyRow | undefined;
      return row ? toKeyInfo(row) : undefined;
    });
    if (changed) this.emit({ kind: 'key', id });
    return info;
  }

  async listActiveKeyHashes(): Promise<ApiKeyRecord[]> {
    const rows = this.db.prepare(`SELECT ${KEY_COLUMNS} FROM api_key WHERE revoked_at IS NULL`).all() as KeyRow[];
    return rows.map(toKeyRecord);
  }

  async watch(onChange: (change: StoreChange) => void): Promise<() => void> {
    this.watchers.add(onChange);
    return () => {
      this.watchers.delete(onChange);
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watchers.clear();
    this.db.close();
    this.lock.release();
  }
}
