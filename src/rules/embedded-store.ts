// The embedded rule store: one SQLite file (WAL mode) in SLUICE_DATA_DIR, for a
// single gateway without PostgreSQL. Same columns as the PostgreSQL schema, same
// validation; changes are announced in-process, since only this process writes.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { assertValidId } from '../core/ids.js';
import { parseRule, type Rule } from '../core/rule.js';
import { type DirLock, lockDataDir } from './dir-lock.js';
import { assertValidKeyId, hashApiKey, newApiKey, newKeyId } from './keys.js';
import { errorMessage, type RulesLogger, silentLogger } from './logger.js';
import { assertRuleTarget, fromColumns, toColumns } from './rule-columns.js';
import type { ApiKeyInfo, ApiKeyRecord, CreatedKey, RuleFilter, RuleStore, SeedRule, StoreChange } from './store.js';
import type { StoredRule } from './types.js';

export interface EmbeddedStoreOptions {
  /** SLUICE_DATA_DIR; created if missing. */
  dataDir: string;
  seedRules?: readonly SeedRule[];
  logger?: RulesLogger;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS rate_limit_rule (
  tenant_id TEXT NOT NULL CHECK (length(tenant_id) BETWEEN 1 AND 64),
  route_id TEXT NOT NULL CHECK (length(route_id) BETWEEN 1 AND 64),
  policy TEXT NOT NULL,
  capacity INTEGER NULL CHECK (capacity > 0),
  refill_per_second REAL NULL CHECK (refill_per_second > 0),
  params TEXT NOT NULL DEFAULT '{}',
  shadow INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, route_id)
);
CREATE TABLE IF NOT EXISTS api_key (
  id TEXT PRIMARY KEY,
  key_hash BLOB NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  tenant_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT NULL
);
CREATE INDEX IF NOT EXISTS api_key_tenant_idx ON api_key (tenant_id);
CREATE TABLE IF NOT EXISTS sluice_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

interface RuleRow {
  tenant_id: string;
  route_id: string;
  policy: Rule['policy'];
  capacity: number | null;
  refill_per_second: number | null;
  params: string;
  shadow: number;
  updated_at: string;
}

interface KeyRow {
  id: string;
  tenant_id: string;
  created_at: string;
  revoked_at: string | null;
  hash: string;
}

const RULE_COLUMNS = 'tenant_id, route_id, policy, capacity, refill_per_second, params, shadow, updated_at';
const KEY_COLUMNS = 'id, tenant_id, created_at, revoked_at, lower(hex(key_hash)) AS hash';

export class EmbeddedRuleStore implements RuleStore {
  readonly kind = 'embedded';
  readonly location: string;
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
      this.db.exec(SCHEMA);
      this.seed(options.seedRules ?? []);
    } catch (error) {
      this.lock.release();
      throw error;
    }
  }

  /** The config's rules, written on the first start only: afterwards the admin API owns them. */
  private seed(seeds: readonly SeedRule[]): void {
    const validated = seeds.map((seed) => {
      assertRuleTarget(seed.tenant, seed.route);
      return { ...seed, columns: toColumns(parseRule(seed.rule)) };
    });
    const insert = this.db.prepare(
      `INSERT OR IGNORE INTO rate_limit_rule (${RULE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const claimed = this.db.transaction(() => {
      const claim = this.db.prepare("INSERT OR IGNORE INTO sluice_meta (key, value) VALUES ('seeded', ?)").run(new Date().toISOString());
      if (claim.changes !== 1) return false;
      const now = new Date().toISOString();
      for (const { tenant, route, columns: c } of validated) {
        insert.run(tenant, route, c.policy, c.capacity, c.refillPerSecond, JSON.stringify(c.params), c.shadow ? 1 : 0, now);
      }
      return true;
    })();
    if (claimed && validated.length > 0) this.logger.info({ rules: validated.length, store: this.location }, 'seeded the rule store from the config');
  }

  private emit(change: StoreChange): void {
    // After the write returns, like a NOTIFY after commit.
    queueMicrotask(() => {
      for (const watcher of this.watchers) watcher(change);
    });
  }

  async listRules(filter: RuleFilter = {}): Promise<StoredRule[]> {
    if (filter.tenant !== undefined) assertRuleTarget(filter.tenant, '*');
    const rows =
      filter.tenant === undefined
        ? this.db.prepare(`SELECT ${RULE_COLUMNS} FROM rate_limit_rule ORDER BY tenant_id, route_id`).all()
        : this.db.prepare(`SELECT ${RULE_COLUMNS} FROM rate_limit_rule WHERE tenant_id = ? ORDER BY route_id`).all(filter.tenant);
    return (rows as RuleRow[]).flatMap((row) => this.toStored(row));
  }

  async getRule(tenant: string, route: string): Promise<StoredRule | undefined> {
    assertRuleTarget(tenant, route);
    const row = this.db.prepare(`SELECT ${RULE_COLUMNS} FROM rate_limit_rule WHERE tenant_id = ? AND route_id = ?`).get(tenant, route);
    return row ? this.toStored(row as RuleRow)[0] : undefined;
  }

  async putRule(tenant: string, route: string, rule: Rule): Promise<StoredRule> {
    assertRuleTarget(tenant, route);
    const c = toColumns(parseRule(rule));
    const row = this.db
      .prepare(
        `INSERT INTO rate_limit_rule (${RULE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (tenant_id, route_id) DO UPDATE SET policy = excluded.policy, capacity = excluded.capacity,
           refill_per_second = excluded.refill_per_second, params = excluded.params, shadow = excluded.shadow, updated_at = excluded.updated_at
         RETURNING ${RULE_COLUMNS}`,
      )
      .get(tenant, route, c.policy, c.capacity, c.refillPerSecond, JSON.stringify(c.params), c.shadow ? 1 : 0, new Date().toISOString());
    this.emit({ kind: 'rule', tenant, route });
    return this.toStored(row as RuleRow)[0]!;
  }

  async deleteRule(tenant: string, route: string): Promise<boolean> {
    assertRuleTarget(tenant, route);
    const result = this.db.prepare('DELETE FROM rate_limit_rule WHERE tenant_id = ? AND route_id = ?').run(tenant, route);
    if (result.changes === 1) this.emit({ kind: 'rule', tenant, route });
    return result.changes === 1;
  }

  async createKey(tenant: string): Promise<CreatedKey> {
    assertValidId(tenant, 'tenant');
    const key = newApiKey();
    const id = newKeyId();
    const createdAt = new Date().toISOString();
    this.db.prepare('INSERT INTO api_key (id, key_hash, tenant_id, created_at) VALUES (?, ?, ?, ?)').run(id, hashApiKey(key), tenant, createdAt);
    this.emit({ kind: 'key', id });
    return { id, key, tenant, createdAt };
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
    return row ? { ...toKeyInfo(row), hash: row.hash } : undefined;
  }

  async revokeKey(id: string): Promise<ApiKeyInfo | undefined> {
    assertValidKeyId(id);
    const result = this.db.prepare('UPDATE api_key SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(new Date().toISOString(), id);
    if (result.changes === 1) this.emit({ kind: 'key', id });
    const row = this.db.prepare(`SELECT ${KEY_COLUMNS} FROM api_key WHERE id = ?`).get(id) as KeyRow | undefined;
    return row ? toKeyInfo(row) : undefined;
  }

  async listActiveKeyHashes(): Promise<ApiKeyRecord[]> {
    const rows = this.db.prepare(`SELECT ${KEY_COLUMNS} FROM api_key WHERE revoked_at IS NULL`).all() as KeyRow[];
    return rows.map((row) => ({ ...toKeyInfo(row), hash: row.hash }));
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

  private toStored(row: RuleRow): StoredRule[] {
    try {
      const rule = fromColumns(
        {
          policy: row.policy,
          capacity: row.capacity,
          refillPerSecond: row.refill_per_second,
          params: JSON.parse(row.params) as Record<string, unknown>,
          shadow: row.shadow === 1,
        },
        `rate_limit_rule[${row.tenant_id}/${row.route_id}]`,
      );
      return [{ tenant: row.tenant_id, route: row.route_id, rule, updatedAt: row.updated_at }];
    } catch (error) {
      this.logger.error({ err: errorMessage(error), store: this.location }, 'skipping an invalid rule row');
      return [];
    }
  }
}

function toKeyInfo(row: KeyRow): ApiKeyInfo {
  return { id: row.id, tenant: row.tenant_id, createdAt: row.created_at, revokedAt: row.revoked_at ?? undefined };
}
