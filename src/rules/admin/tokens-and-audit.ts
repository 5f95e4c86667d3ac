// Who may do what, and who did what: named admin tokens with a role, and the
// audit log of every change. Both live in the rule store beside the rules
// (PostgreSQL: migrations/005; embedded: embedded/schema.ts), so every
// instance sharing a PostgreSQL store sees the same tokens and the same log.
// A token is 32 random bytes shown once; only its SHA-256 is kept.
import { SluiceError } from '../../core/errors.js';
import { errorMessage } from '../logger.js';

export const ROLES = ['read', 'write', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** `read` < `write` < `admin`: each role may do what the ones before it may. */
export const roleAllows = (held: Role, needed: Role): boolean => ROLES.indexOf(held) >= ROLES.indexOf(needed);

/** SLUICE_ADMIN_TOKEN's name: an `admin` token no store holds. */
export const BOOTSTRAP_NAME = 'bootstrap';
const TOKEN_NAME = /^[A-Za-z0-9._-]{1,64}$/;

export interface AdminToken {
  name: string;
  role: Role;
  createdAt: string; // ISO timestamp
}

export interface CreatedToken extends AdminToken {
  /** The clear token: shown once, never stored. */
  token: string;
}

export const AUDIT_KINDS = ['rule', 'override', 'key', 'token', 'bucket', 'reload', 'plan', 'list'] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

export interface AuditEntry {
  id: number;
  at: string; // ISO timestamp
  /** The token's name (`bootstrap` for SLUICE_ADMIN_TOKEN). */
  actor: string;
  /** The client's address as the admin listener saw it. */
  address: string;
  kind: AuditKind;
  /** The HTTP method and the endpoint, e.g. `PUT /rules/{tenant}/{route}`. */
  action: string;
  /** What was changed, e.g. `acme/orders`; never a clear key, token or header value. */
  target: string;
  before: unknown;
  after: unknown;
  outcome: 'ok' | 'failed';
  /** The error code and message of a failed write. */
  error?: string | undefined;
}

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at'>;

/** A change whose entry the store would not take (a constraint, a full disk) is rolled back with it: never a change without its entry. */
export const auditRefused = (error: unknown): SluiceError =>
  new SluiceError('ERR_STORE_UNAVAILABLE', `the rule store refused the audit entry of this change (${errorMessage(error)}), so the change was rolled back`);

export interface AuditFilter {
  since?: string | undefined;
  until?: string | undefined;
  actor?: string | undefined;
  kind?: AuditKind | undefined;
  /** Entries older than this id (the previous page's `next`). */
  before?: number | undefined;
  limit: number;
}

/**
 * How much of the log is kept: entries older than `days` are pruned at each
 * append, and so are changes (outcome ok) beyond the newest `entries` and
 * failed attempts beyond the newest `failedEntries`: each outcome counts
 * apart, so refused writes never push a change out.
 */
export interface AuditRetention {
  days: number;
  entries: number;
  failedEntries: number;
}

export const DEFAULT_RETENTION: AuditRetention = { days: 90, entries: 100_000, failedEntries: 10_000 };

/** The newest this many entries of `outcome` are kept. */
export const auditCap = (retention: AuditRetention, outcome: AuditEntry['outcome']): number => (outcome === 'ok' ? retention.entries : retention.failedEntries);

export interface TeamStore {
  createToken(name: string, role: Role): Promise<CreatedToken>;
  listTokens(): Promise<AdminToken[]>;
  /** Whether a token of that name was there to revoke (revoking deletes it). */
  revokeToken(name: string): Promise<boolean>;
  /** The token whose SHA-256 (32 bytes) this is, if any. */
  tokenByHash(hash: Buffer): Promise<(AdminToken & { hash: Buffer }) | undefined>;
  appendAudit(entry: NewAuditEntry): Promise<void>;
  /** Newest first. */
  listAudit(filter: AuditFilter): Promise<AuditEntry[]>;
}

export function assertTokenName(name: unknown, field = 'name'): asserts name is string {
  if (typeof name !== 'string' || !TOKEN_NAME.test(name)) throw new SluiceError('ERR_ID_INVALID', 'must be 1 to 64 letters, digits, ., _ or -', field);
  if (name === BOOTSTRAP_NAME) throw new SluiceError('ERR_BAD_REQUEST', `"${BOOTSTRAP_NAME}" is SLUICE_ADMIN_TOKEN's name; choose another`, field);
}

export function assertRole(role: unknown, field = 'role'): asserts role is Role {
  if (!ROLES.includes(role as Role)) throw new SluiceError('ERR_BAD_REQUEST', `must be one of ${ROLES.join(', ')}`, field);
}

/** A store's row of admin_token or audit_log, whichever driver read it. */
export interface TokenRow {
  name: string;
  role: string;
  created_at: Date | string;
  token_hash: Buffer;
}

export interface AuditRow {
  id: number | string;
  at: Date | string;
  actor: string;
  address: string;
  kind: string;
  action: string;
  target: string;
  before: unknown;
  after: unknown;
  outcome: string;
  error: string | null;
}

const iso = (time: Date | string): string => (typeof time === 'string' ? time : time.toISOString());
/** SQLite keeps JSON as text; PostgreSQL's JSONB arrives parsed. */
const parsed = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : (value ?? null));

export const tokenFromRow = (row: TokenRow): AdminToken & { hash: Buffer } => ({ name: row.name, role: row.role as Role, createdAt: iso(row.created_at), hash: row.token_hash });

export function auditFromRow(row: AuditRow): AuditEntry {
  const entry: AuditEntry = {
    ...{ id: Number(row.id), at: iso(row.at), actor: row.actor, address: row.address, kind: row.kind as AuditKind, action: row.action, target: row.target },
    ...{ before: parsed(row.before), after: parsed(row.after), outcome: row.outcome === 'ok' ? 'ok' : 'failed' },
  };
  if (row.error !== null) entry.error = row.error;
  return entry;
}

/** The log's bounds from SLUICE_AUDIT_KEEP_DAYS, SLUICE_AUDIT_KEEP_ENTRIES and SLUICE_AUDIT_KEEP_FAILED (whole numbers ≥ 1), read when a store opens. */
export function retentionFromEnv(env: NodeJS.ProcessEnv = process.env): AuditRetention {
  const read = (name: string, fallback: number): number => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < 1) throw new SluiceError('ERR_CONFIG_INVALID', `must be a whole number ≥ 1, got ${JSON.stringify(text)}`, name);
    return value;
  };
  return {
    days: read('SLUICE_AUDIT_KEEP_DAYS', DEFAULT_RETENTION.days),
    entries: read('SLUICE_AUDIT_KEEP_ENTRIES', DEFAULT_RETENTION.entries),
    failedEntries: read('SLUICE_AUDIT_KEEP_FAILED', DEFAULT_RETENTION.failedEntries),
  };
}
