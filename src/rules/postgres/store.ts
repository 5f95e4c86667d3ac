// The PostgreSQL rule store: a `pg` Pool for reads and writes, migrations on
// first use, triggers that NOTIFY every change (migrations/002) and one LISTEN
// connection that turns them into `watch` callbacks on every instance.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { assertValidId } from '../../core/ids.js';
import type { Rule } from '../../policies/rule.js';
import { assertValidKeyId, hashApiKey, newApiKey, newKeyId } from '../keys.js';
import { type RulesLogger, silentLogger } from '../logger.js';
import { migrate } from './migrations.js';
import { describeUrl, isConnectionError, storeError, unavailable } from './errors.js';
import { type PgConnection, pgClientConfig } from './connection.js';
import { PgListener } from './listener.js';
import { seedOnce } from './seed.js';
import { PgOverrideStore } from './overrides.js';
import { PgListStore } from './lists.js';
import { PgPlanStore } from './plans.js';
import { PgTeamStore } from './tokens-and-audit.js';
import { auditRefused } from '../admin/tokens-and-audit.js';
import { StoreTimeoutError, waitAtMost, withTimedClient, writeBeforeDeadline } from './timed.js';
import { currentCall, pendingEntry } from '../admin/call-scope.js';
import { assertRuleTarget } from '../rule-columns.js';
import { type KeyRow, RULE_COLUMNS, RULE_WRITE_COLUMNS, type RuleRow, ruleValues, storedFromRow, storedFromWrite, toKeyInfo, toKeyRecord, updateRuleColumns } from '../rule-rows.js';
import type { ApiKeyInfo, ApiKeyRecord, CreatedKey, RuleFilter, RuleSetVersion, RuleStore, SeedRule, StoreChange } from '../store.js';
import type { StoredRule } from '../types.js';

export interface PostgresStoreOptions {
  connectionString: string;
  connection?: PgConnection | undefined; // database.tls and passwordFile's password
  /** Written once, on the first start against an empty store (the config file's rules). */
  seedRules?: readonly SeedRule[];
  logger?: RulesLogger;
  poolSize?: number;
  /** Reads and writes give up after this (default 3000 ms); also the server's statement_timeout. */
  statementTimeoutMs?: number;
  /** Connecting gives up after this (default 3000 ms). */
  connectTimeoutMs?: number;
  /** How far the server's clock may lag ours (default 500 ms): see `write`. */
  maxClockSkewMs?: number;
}

const KEY_COLUMNS = "id, tenant_id, created_at, revoked_at, encode(key_hash, 'hex') AS hash";

export class PostgresRuleStore implements RuleStore {
  readonly kind = 'postgres';
  readonly location: string;
  readonly overrides: PgOverrideStore;
  readonly plans: PgPlanStore;
  readonly lists: PgListStore;
  readonly team: PgTeamStore;
  /** How long one admin call may wait on this store, all its calls together (admin/call-scope.ts). */
  readonly callTimeoutMs: number;
  private readonly pool: pg.Pool;
  private readonly logger: RulesLogger;
  private ready: Promise<void> | undefined;
  private listener: PgListener | undefined;
  private listening: Promise<void> | undefined;
  private readonly watchers = new Set<(change: StoreChange) => void>();
  private readonly timeoutMs: number;
  private readonly skewMs: number;
  private readonly connectTimeoutMs: number;
  /** The cache's full loads may carry 100,000s of rows: 10 × the statement timeout. */
  private readonly fullLoadTimeoutMs: number;
  private probing: Promise<void> | undefined;

  constructor(private readonly options: PostgresStoreOptions) {
    this.logger = options.logger ?? silentLogger;
    this.location = describeUrl(options.connectionString);
    this.timeoutMs = options.statementTimeoutMs ?? 3000;
    this.callTimeoutMs = this.timeoutMs;
    this.skewMs = options.maxClockSkewMs ?? 500;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 3000;
    this.fullLoadTimeoutMs = this.timeoutMs * 10;
    this.pool = new pg.Pool({
      ...pgClientConfig(options.connectionString, options.connection),
      max: options.poolSize ?? 4,
      connectionTimeoutMillis: this.connectTimeoutMs,
      keepAlive: true,
      // Server-side bounds too, so work we gave up on does not run on; a frozen
      // server stops these timers as well, which is why every call has its own.
      statement_timeout: this.fullLoadTimeoutMs,
      idle_in_transaction_session_timeout: this.timeoutMs * 2,
    });
    // An idle client whose server went away must not crash the process.
    this.pool.on('error', (error) => this.logger.warn({ err: error.message, store: this.location }, 'rule store connection lost'));
    const access = { query: this.query.bind(this), write: this.write.bind(this), fullLoadTimeoutMs: this.fullLoadTimeoutMs, logger: this.logger, location: this.location };
    [this.overrides, this.team, this.plans, this.lists] = [new PgOverrideStore(access), new PgTeamStore(access), new PgPlanStore(access), new PgListStore(access)];
  }

  /** Migrates and seeds once; retried on the next call after a failure. */
  private ensureReady(): Promise<void> {
    this.ready ??= this.prepare().catch((error) => {
      this.ready = undefined;
      throw unavailable(this.location, error, this.connectTimeoutMs);
    });
    return this.ready;
  }

  /** Bounded like a full load: a server frozen mid-migration must not hold every later call. */
  private async prepare(): Promise<void> {
    await withTimedClient(this.pool, this.fullLoadTimeoutMs, async (client) => {
      const applied = await migrate(client);
      if (applied.length > 0) this.logger.info({ migrations: applied.map((m) => `${m.version}_${m.name}`) }, 'applied migrations');
      await seedOnce(client, this.options.seedRules ?? [], this.logger, this.location);
    });
  }

  /** Migrated and seeded, or a timeout once `deadline` (epoch ms) has passed: a first call on a frozen server waits no longer than its admin call may. */
  private async readyBy(deadline: number, timeoutMs: number): Promise<void> {
    const ready = this.ensureReady();
    if (deadline === Number.POSITIVE_INFINITY) return ready;
    ready.catch(() => {});
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StoreTimeoutError(timeoutMs)), Math.max(0, deadline - Date.now()));
    });
    try {
      await Promise.race([ready, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** A read, answered or abandoned within statementTimeoutMs, and within what is left of its admin call's deadline. */
  private async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = [], timeoutMs = this.timeoutMs): Promise<pg.QueryResult<R>> {
    const deadline = Math.min(Date.now() + timeoutMs, currentCall()?.deadline ?? Number.POSITIVE_INFINITY);
    const left = Math.max(0, deadline - Date.now());
    try {
      await this.readyBy(deadline, left);
      return await withTimedClient(this.pool, Math.max(0, deadline - Date.now()), (client) => client.query<R>(sql, params));
    } catch (error) {
      throw storeError(this.location, 'read', left, error, this.connectTimeoutMs);
    }
  }

  /**
   * A write that can never commit after its answer said it failed (see
   * writeBeforeDeadline), bounded by statementTimeoutMs and by its admin call's
   * deadline. `shape` makes the method's answer from the statement's result,
   * inside the transaction: the admin call's audit entry of that answer is
   * written there too, so the change and its entry commit or fail together.
   */
  private async write<R extends pg.QueryResultRow, T>(sql: string, params: unknown[], shape: (result: pg.QueryResult<R>) => T): Promise<T> {
    const started = Date.now();
    const deadlineMs = Math.min(started + this.timeoutMs, currentCall()?.deadline ?? Number.POSITIVE_INFINITY);
    const answerMs = Math.max(0, deadlineMs + this.skewMs - started);
    let sent = false;
    let recorded: (() => void) | undefined;
    try {
      await this.readyBy(deadlineMs, answerMs);
      const answer = await withTimedClient(this.pool, Math.max(0, started + answerMs - Date.now()), (client) => {
        sent = true;
        return writeBeforeDeadline<R, T>(client, new Date(deadlineMs), sql, params, async (result) => {
          const shaped = shape(result);
          const pending = pendingEntry(shaped);
          // A refused entry (not a lost connection, which the deadline logic below answers) fails the change with it.
          if (pending) await client.query(...this.team.auditInsert(pending.entry)).catch((error) => Promise.reject(isConnectionError(error) ? error : auditRefused(error)));
          recorded = pending?.committed;
          return shaped;
        });
      });
      recorded?.();
      return answer;
    } catch (error) {
      // A connection lost mid-write leaves the outcome open until the deadline: answer once it can no longer commit.
      while (sent && isConnectionError(error) && Date.now() < started + answerMs) await sleep(started + answerMs - Date.now());
      throw storeError(this.location, 'write', answerMs, error, this.connectTimeoutMs);
    }
  }

  /** Resolves when the server answers `SELECT 1` within `timeoutMs`; one probe at a time. */
  ping(timeoutMs: number): Promise<void> {
    this.probing ??= withTimedClient(this.pool, timeoutMs, (client) => client.query('SELECT 1'))
      .then(() => undefined)
      .catch((error) => {
        throw storeError(this.location, 'health check', timeoutMs, error, this.connectTimeoutMs);
      })
      .finally(() => {
        this.probing = undefined;
      });
    return this.probing;
  }

  async listRules(filter: RuleFilter = {}): Promise<StoredRule[]> {
    if (filter.tenant !== undefined) assertRuleTarget(filter.tenant, '*');
    const where = filter.tenant === undefined ? '' : 'WHERE tenant_id = $1';
    const result = await this.query<RuleRow>(
      `SELECT ${RULE_COLUMNS} FROM rate_limit_rule ${where} ORDER BY tenant_id, route_id`,
      filter.tenant === undefined ? [] : [filter.tenant],
      filter.tenant === undefined && !filter.interactive ? this.fullLoadTimeoutMs : this.timeoutMs,
    );
    return result.rows.flatMap((row) => storedFromRow(row, this.logger, this.location));
  }

  async getRule(tenant: string, route: string): Promise<StoredRule | undefined> {
    assertRuleTarget(tenant, route);
    const result = await this.query<RuleRow>(`SELECT ${RULE_COLUMNS} FROM rate_limit_rule WHERE tenant_id = $1 AND route_id = $2`, [tenant, route]);
    return result.rows.flatMap((row) => storedFromRow(row, this.logger, this.location))[0];
  }

  /** `rule` was parsed at the boundary (admin API, config): written as is. */
  async putRule(tenant: string, route: string, rule: Rule): Promise<StoredRule> {
    assertRuleTarget(tenant, route);
    return this.write<{ updated_at: Date }, StoredRule>(
      `INSERT INTO rate_limit_rule (${RULE_WRITE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (tenant_id, route_id) DO UPDATE SET ${updateRuleColumns('now()')} RETURNING updated_at`,
      ruleValues(tenant, route, rule),
      (result) => storedFromWrite(tenant, route, rule, result.rows[0]!.updated_at),
    );
  }

  async deleteRule(tenant: string, route: string): Promise<boolean> {
    assertRuleTarget(tenant, route);
    return this.write('DELETE FROM rate_limit_rule WHERE tenant_id = $1 AND route_id = $2', [tenant, route], (result) => result.rowCount === 1);
  }

  async createKey(tenant: string): Promise<CreatedKey> {
    assertValidId(tenant, 'tenant');
    const key = newApiKey();
    const sql = `INSERT INTO api_key (id, key_hash, tenant_id) VALUES ($1, $2, $3) RETURNING ${KEY_COLUMNS}`;
    return this.write<KeyRow, CreatedKey>(sql, [newKeyId(), hashApiKey(key), tenant], (result) => {
      const info = toKeyInfo(result.rows[0]!);
      return { id: info.id, key, tenant, createdAt: info.createdAt };
    });
  }

  async listKeys(tenant?: string): Promise<ApiKeyInfo[]> {
    if (tenant !== undefined) assertValidId(tenant, 'tenant');
    const where = tenant === undefined ? '' : 'WHERE tenant_id = $1';
    const result = await this.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_key ${where} ORDER BY created_at, id`, tenant === undefined ? [] : [tenant]);
    return result.rows.map(toKeyInfo);
  }

  async getKey(id: string): Promise<ApiKeyRecord | undefined> {
    assertValidKeyId(id);
    const result = await this.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_key WHERE id = $1`, [id]);
    const row = result.rows[0];
    return row ? toKeyRecord(row) : undefined;
  }

  async revokeKey(id: string): Promise<ApiKeyInfo | undefined> {
    assertValidKeyId(id);
    return this.write<KeyRow, ApiKeyInfo | undefined>(`UPDATE api_key SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [id], (result) =>
      result.rows[0] ? toKeyInfo(result.rows[0]) : undefined,
    );
  }

  async listActiveKeyHashes(): Promise<ApiKeyRecord[]> {
    const result = await this.query<KeyRow>(`SELECT ${KEY_COLUMNS} FROM api_key WHERE revoked_at IS NULL`, [], this.fullLoadTimeoutMs);
    return result.rows.map(toKeyRecord);
  }

  async ruleSetVersion(): Promise<RuleSetVersion> {
    const row = (await this.query<{ version: string; store_id: string }>('SELECT version, store_id FROM rule_set_version', [])).rows[0];
    return { version: Number(row?.version ?? 0), storeId: row?.store_id ?? '' };
  }

  async watch(onChange: (change: StoreChange) => void): Promise<() => void> {
    this.watchers.add(onChange);
    if (!this.listener) {
      this.listener = new PgListener({
        ...{ connectionString: this.options.connectionString, connection: this.options.connection },
        connectTimeoutMs: this.connectTimeoutMs,
        heartbeatMs: Math.max(this.timeoutMs, 1000),
        heartbeatTimeoutMs: this.timeoutMs,
        onChange: (change) => {
          for (const watcher of this.watchers) watcher(change);
        },
      });
      this.listening = this.listener.start();
    }
    await this.listening;
    return () => void this.watchers.delete(onChange);
  }

  /** Bounded: a frozen server never answers a goodbye, and shutdown must not wait for it. */
  async close(): Promise<void> {
    this.watchers.clear();
    const closing = Promise.all([this.listener?.close(), this.pool.end().catch(() => {})]);
    await waitAtMost(closing, this.timeoutMs);
  }
}
