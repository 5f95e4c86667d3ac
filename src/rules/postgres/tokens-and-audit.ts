// The PostgreSQL store's admin tokens and audit log (migrations/005), through
// the store's own bounded `query` and deadline-carrying `write`.
import { SluiceError } from '../../core/errors.js';
import { hashApiKey, newApiKey } from '../keys.js';
import type { PgAccess } from './overrides.js';
import { type AdminToken, auditCap, type AuditEntry, type AuditFilter, type AuditRetention, type AuditRow, retentionFromEnv, assertRole, assertTokenName, auditFromRow, type CreatedToken, type NewAuditEntry, type Role, type TeamStore, type TokenRow, tokenFromRow } from '../admin/tokens-and-audit.js';

const AUDIT_COLUMNS = 'id, at, actor, address, kind, action, target, before, after, outcome, error';

/** A unique violation: the name is taken. */
const isDuplicate = (error: unknown): boolean => (error as { code?: string } | undefined)?.code === '23505';

export class PgTeamStore implements TeamStore {
  constructor(
    private readonly db: PgAccess,
    private readonly retention: AuditRetention = retentionFromEnv(),
  ) {}

  async createToken(name: string, role: Role): Promise<CreatedToken> {
    assertTokenName(name);
    assertRole(role);
    const token = newApiKey();
    try {
      return await this.db.write<{ created_at: Date }, CreatedToken>('INSERT INTO admin_token (name, role, token_hash) VALUES ($1, $2, $3) RETURNING created_at', [name, role, hashApiKey(token)], (result) => ({
        ...{ name, role, token },
        createdAt: result.rows[0]!.created_at.toISOString(),
      }));
    } catch (error) {
      if (isDuplicate(error)) throw new SluiceError('ERR_BAD_REQUEST', `a token named ${name} exists; revoke it first`, 'name');
      throw error;
    }
  }

  async listTokens(): Promise<AdminToken[]> {
    const result = await this.db.query<TokenRow>('SELECT name, role, created_at, token_hash FROM admin_token ORDER BY name', []);
    return result.rows.map((row) => {
      const { hash: _, ...token } = tokenFromRow(row);
      return token;
    });
  }

  async revokeToken(name: string): Promise<boolean> {
    assertTokenName(name);
    return this.db.write('DELETE FROM admin_token WHERE name = $1', [name], (result) => result.rowCount === 1);
  }

  async tokenByHash(hash: Buffer): Promise<(AdminToken & { hash: Buffer }) | undefined> {
    const result = await this.db.query<TokenRow>('SELECT name, role, created_at, token_hash FROM admin_token WHERE token_hash = $1', [hash]);
    return result.rows[0] ? tokenFromRow(result.rows[0]) : undefined;
  }

  /** One statement: the entry, and the prune of what the retention no longer keeps. Run alone (appendAudit) or in the transaction of the change it records. */
  auditInsert(entry: NewAuditEntry): [string, unknown[]] {
    return [
      // seq numbers each outcome apart (migrations/007): the cap prunes the entry's own outcome only.
      `WITH last AS (SELECT coalesce(max(seq), 0) AS seq FROM audit_log WHERE outcome = $8),
       pruned AS (DELETE FROM audit_log WHERE at < now() - make_interval(days => $10) OR (outcome = $8 AND seq <= (SELECT seq FROM last) - $11))
       INSERT INTO audit_log (actor, address, kind, action, target, before, after, outcome, error, seq)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, (SELECT seq FROM last) + 1)`,
      [
        ...[entry.actor, entry.address, entry.kind, entry.action, entry.target, JSON.stringify(entry.before ?? null), JSON.stringify(entry.after ?? null), entry.outcome, entry.error ?? null],
        ...[this.retention.days, auditCap(this.retention, entry.outcome) - 1],
      ],
    ];
  }

  async appendAudit(entry: NewAuditEntry): Promise<void> {
    await this.db.write(...this.auditInsert(entry), () => undefined);
  }

  async listAudit(filter: AuditFilter): Promise<AuditEntry[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: string, value: unknown): void => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (filter.since !== undefined) add('at >= ?', filter.since);
    if (filter.until !== undefined) add('at < ?', filter.until);
    if (filter.actor !== undefined) add('actor = ?', filter.actor);
    if (filter.kind !== undefined) add('kind = ?', filter.kind);
    if (filter.before !== undefined) add('id < ?', filter.before);
    params.push(filter.limit);
    const sql = `SELECT ${AUDIT_COLUMNS} FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.length}`;
    return (await this.db.query<AuditRow>(sql, params)).rows.map(auditFromRow);
  }
}
