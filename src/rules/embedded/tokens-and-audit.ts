// The embedded store's admin tokens and audit log (tables of schema.ts,
// mirroring migrations/005). Tokens live in this instance's own file: with the
// embedded store, each instance has its own tokens.
import type Database from 'better-sqlite3';
import { SluiceError } from '../../core/errors.js';
import { pendingEntry } from '../admin/call-scope.js';
import { hashApiKey, newApiKey } from '../keys.js';
import { type AdminToken, auditCap, auditRefused, type AuditEntry, type AuditFilter, type AuditRetention, type AuditRow, assertRole, assertTokenName, auditFromRow, type CreatedToken, type NewAuditEntry, type Role, type TeamStore, type TokenRow, retentionFromEnv, tokenFromRow } from '../admin/tokens-and-audit.js';

const AUDIT_COLUMNS = 'id, at, actor, address, kind, action, target, before, after, outcome, error';

export class EmbeddedTeamStore implements TeamStore {
  constructor(
    private readonly db: Database.Database,
    /** Told after a token is created or revoked: the rule-set version moved (store.ts announces it). */
    private readonly changed: () => void = () => {},
    private readonly retention: AuditRetention = retentionFromEnv(),
  ) {}

  async createToken(name: string, role: Role): Promise<CreatedToken> {
    assertTokenName(name);
    assertRole(role);
    const token = newApiKey();
    const createdAt = new Date().toISOString();
    const created = this.change(() => {
      const taken = this.db.prepare('INSERT OR IGNORE INTO admin_token (name, role, token_hash, created_at) VALUES (?, ?, ?, ?)').run(name, role, hashApiKey(token), createdAt);
      if (taken.changes !== 1) throw new SluiceError('ERR_BAD_REQUEST', `a token named ${name} exists; revoke it first`, 'name');
      return { name, role, token, createdAt };
    });
    this.changed();
    return created;
  }

  async listTokens(): Promise<AdminToken[]> {
    const rows = this.db.prepare('SELECT name, role, created_at, token_hash FROM admin_token ORDER BY name').all() as TokenRow[];
    return rows.map((row) => {
      const { hash: _, ...token } = tokenFromRow(row);
      return token;
    });
  }

  async revokeToken(name: string): Promise<boolean> {
    assertTokenName(name);
    const revoked = this.change(() => this.db.prepare('DELETE FROM admin_token WHERE name = ?').run(name).changes === 1);
    if (revoked) this.changed();
    return revoked;
  }

  async tokenByHash(hash: Buffer): Promise<(AdminToken & { hash: Buffer }) | undefined> {
    const row = this.db.prepare('SELECT name, role, created_at, token_hash FROM admin_token WHERE token_hash = ?').get(hash) as TokenRow | undefined;
    return row ? tokenFromRow(row) : undefined;
  }

  /**
   * `work` (a change, synchronous) in one transaction with the current admin
   * call's audit entry of its result (admin/call-scope.ts): both commit, or neither.
   */
  change<T>(work: () => T): T {
    let recorded: (() => void) | undefined;
    const result = this.db.transaction(() => {
      const value = work();
      const pending = pendingEntry(value);
      if (pending) {
        try {
          this.insertAudit(pending.entry);
        } catch (error) {
          throw auditRefused(error);
        }
      }
      recorded = pending?.committed;
      return value;
    })();
    recorded?.();
    return result;
  }

  async appendAudit(entry: NewAuditEntry): Promise<void> {
    this.db.transaction(() => this.insertAudit(entry))();
  }

  /** The entry, and the prune of what the retention no longer keeps; inside the caller's transaction. */
  private insertAudit(entry: NewAuditEntry): void {
    const now = new Date();
    const oldest = new Date(now.getTime() - this.retention.days * 86_400_000).toISOString();
    // seq numbers each outcome apart (schema.ts V6): the cap prunes the entry's own outcome only.
    const last = (this.db.prepare('SELECT coalesce(max(seq), 0) AS seq FROM audit_log WHERE outcome = ?').get(entry.outcome) as { seq: number }).seq;
    this.db.prepare('DELETE FROM audit_log WHERE at < ? OR (outcome = ? AND seq <= ?)').run(oldest, entry.outcome, last - (auditCap(this.retention, entry.outcome) - 1));
    this.db
      .prepare(`INSERT INTO audit_log (${AUDIT_COLUMNS}, seq) VALUES (NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
      .run(now.toISOString(), entry.actor, entry.address, entry.kind, entry.action, entry.target, JSON.stringify(entry.before ?? null), JSON.stringify(entry.after ?? null), entry.outcome, entry.error ?? null, last + 1);
  }

  async listAudit(filter: AuditFilter): Promise<AuditEntry[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown): void => {
      where.push(sql);
      params.push(value);
    };
    // ISO text in UTC compares as time; the filters arrive as ISO (checked by the admin API).
    if (filter.since !== undefined) add('at >= ?', new Date(filter.since).toISOString());
    if (filter.until !== undefined) add('at < ?', new Date(filter.until).toISOString());
    if (filter.actor !== undefined) add('actor = ?', filter.actor);
    if (filter.kind !== undefined) add('kind = ?', filter.kind);
    if (filter.before !== undefined) add('id < ?', filter.before);
    const sql = `SELECT ${AUDIT_COLUMNS} FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    return (this.db.prepare(sql).all(...params, filter.limit) as AuditRow[]).map(auditFromRow);
  }
}
