// The embedded store's overrides (limit_override in the SQLite file, the schema
// of schema.ts): written in process, each change announced to the
// store's watchers after the write, as rules are.
import type Database from 'better-sqlite3';
import { assertValidId } from '../../core/ids.js';
import type { Rule } from '../../policies/rule.js';
import type { RulesLogger } from '../logger.js';
import { OVERRIDE_COLUMNS, OVERRIDE_WRITE_COLUMNS, type OverrideRow, overrideFromRow, overrideFromWrite, overrideTarget, overrideValues } from '../override-rows.js';
import { updateRuleColumns } from '../rule-rows.js';
import type { OverrideStore, StoreChange } from '../store.js';
import type { StoredOverride } from '../types.js';

export interface SqliteAccess {
  db: Database.Database;
  emit(change: StoreChange): void;
  /** A change in one transaction with its admin call's audit entry (EmbeddedTeamStore.change). */
  change<T>(work: () => T): T;
  logger: RulesLogger;
  location: string;
}

export class EmbeddedOverrideStore implements OverrideStore {
  constructor(private readonly access: SqliteAccess) {}

  private rows(rows: unknown[]): StoredOverride[] {
    return (rows as OverrideRow[]).flatMap((row) => overrideFromRow(row, this.access.logger, this.access.location));
  }

  async list(filter: { limitId?: string } = {}): Promise<StoredOverride[]> {
    const { db } = this.access;
    if (filter.limitId === undefined) return this.rows(db.prepare(`SELECT ${OVERRIDE_COLUMNS} FROM limit_override ORDER BY limit_id, selector`).all());
    assertValidId(filter.limitId, 'limitId');
    return this.rows(db.prepare(`SELECT ${OVERRIDE_COLUMNS} FROM limit_override WHERE limit_id = ? ORDER BY selector`).all(filter.limitId));
  }

  async get(limitId: string, selector: string): Promise<StoredOverride | undefined> {
    const row = this.access.db.prepare(`SELECT ${OVERRIDE_COLUMNS} FROM limit_override WHERE limit_id = ? AND selector = ?`).get(...overrideTarget(limitId, selector));
    return row ? this.rows([row])[0] : undefined;
  }

  async put(limitId: string, selector: string, rule: Rule): Promise<StoredOverride> {
    const [id, canonical] = overrideTarget(limitId, selector);
    const [, , policy, capacity, refill, params, shadow] = overrideValues(id, canonical, rule);
    const updatedAt = new Date().toISOString();
    const stored = this.access.change(() => {
      this.access.db
        .prepare(
          `INSERT INTO limit_override (${OVERRIDE_WRITE_COLUMNS}, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (limit_id, selector) DO UPDATE SET ${updateRuleColumns('excluded.updated_at')}`,
        )
        .run(id, canonical, policy, capacity, refill, JSON.stringify(params), shadow ? 1 : 0, updatedAt);
      return overrideFromWrite(id, canonical, rule, updatedAt);
    });
    this.access.emit({ kind: 'override', limitId: id, selector: canonical });
    return stored;
  }

  async delete(limitId: string, selector: string): Promise<boolean> {
    const [id, canonical] = overrideTarget(limitId, selector);
    const deleted = this.access.change(() => this.access.db.prepare('DELETE FROM limit_override WHERE limit_id = ? AND selector = ?').run(id, canonical).changes === 1);
    if (deleted) this.access.emit({ kind: 'override', limitId: id, selector: canonical });
    return deleted;
  }
}
