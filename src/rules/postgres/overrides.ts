// The PostgreSQL store's overrides (limit_override, migrations/004): reads and
// writes go through the store's own bounded `query` and deadline-carrying
// `write`, so an override write can never commit after its answer said it failed.
import type pg from 'pg';
import { assertValidId } from '../../core/ids.js';
import type { Rule } from '../../policies/rule.js';
import type { RulesLogger } from '../logger.js';
import { OVERRIDE_COLUMNS, OVERRIDE_WRITE_COLUMNS, type OverrideRow, overrideFromRow, overrideFromWrite, overrideTarget, overrideValues } from '../override-rows.js';
import { updateRuleColumns } from '../rule-rows.js';
import type { OverrideStore } from '../store.js';
import type { StoredOverride } from '../types.js';

export interface PgAccess {
  query<R extends pg.QueryResultRow>(sql: string, params: unknown[], timeoutMs?: number): Promise<pg.QueryResult<R>>;
  /** `shape` makes the answer inside the write's transaction (see PostgresRuleStore.write). */
  write<R extends pg.QueryResultRow, T>(sql: string, params: unknown[], shape: (result: pg.QueryResult<R>) => T): Promise<T>;
  /** The timeout of a full (non-interactive) load. */
  fullLoadTimeoutMs: number;
  logger: RulesLogger;
  location: string;
}

export class PgOverrideStore implements OverrideStore {
  constructor(private readonly db: PgAccess) {}

  async list(filter: { limitId?: string; interactive?: boolean } = {}): Promise<StoredOverride[]> {
    if (filter.limitId !== undefined) assertValidId(filter.limitId, 'limitId');
    const where = filter.limitId === undefined ? '' : 'WHERE limit_id = $1';
    const full = filter.limitId === undefined && !filter.interactive;
    const result = await this.db.query<OverrideRow>(
      `SELECT ${OVERRIDE_COLUMNS} FROM limit_override ${where} ORDER BY limit_id, selector`,
      filter.limitId === undefined ? [] : [filter.limitId],
      full ? this.db.fullLoadTimeoutMs : undefined,
    );
    return result.rows.flatMap((row) => overrideFromRow(row, this.db.logger, this.db.location));
  }

  async get(limitId: string, selector: string): Promise<StoredOverride | undefined> {
    const target = overrideTarget(limitId, selector);
    const result = await this.db.query<OverrideRow>(`SELECT ${OVERRIDE_COLUMNS} FROM limit_override WHERE limit_id = $1 AND selector = $2`, target);
    return result.rows.flatMap((row) => overrideFromRow(row, this.db.logger, this.db.location))[0];
  }

  async put(limitId: string, selector: string, rule: Rule): Promise<StoredOverride> {
    const [id, canonical] = overrideTarget(limitId, selector);
    return this.db.write<{ updated_at: Date }, StoredOverride>(
      `INSERT INTO limit_override (${OVERRIDE_WRITE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (limit_id, selector) DO UPDATE SET ${updateRuleColumns('now()')} RETURNING updated_at`,
      overrideValues(id, canonical, rule),
      (result) => overrideFromWrite(id, canonical, rule, result.rows[0]!.updated_at),
    );
  }

  async delete(limitId: string, selector: string): Promise<boolean> {
    return this.db.write('DELETE FROM limit_override WHERE limit_id = $1 AND selector = $2', overrideTarget(limitId, selector), (result) => result.rowCount === 1);
  }
}
