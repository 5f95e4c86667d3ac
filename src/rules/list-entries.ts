// Allow and deny list entries in the rule store (docs/lists.md, list_entry:
// migrations/009): what a store keeps of an entry, how both stores read a row
// back (a row a hand edit broke is logged and skipped, never served), and the
// view the admin API, the CLI and the page show. A header's or a claim's value
// is kept only as its SHA-256 (lists/list-set.ts), so no view can show it.
import { randomBytes } from 'node:crypto';
import { SluiceError } from '../core/errors.js';
import { isValidId } from '../core/ids.js';
import { parseNetwork } from '../lists/prefix-table.js';
import type { ListAction, ListEntry, ListMatch } from '../lists/types.js';
import { errorMessage, type RulesLogger } from './logger.js';

/** The columns both stores read an entry by (entryFromRow). */
export const LIST_COLUMNS = 'id, action, match_kind, match_name, match_value, routes, limit_id, expires_at, note, created_at';

export interface StoredListEntry extends ListEntry {
  createdAt: string; // ISO timestamp
}

export interface ListEntryStore {
  /** Every entry, expired ones included (the cache's full load and the admin listing). */
  list(): Promise<StoredListEntry[]>;
  get(id: string): Promise<StoredListEntry | undefined>;
  /** Stores a checked entry (config-schema.ts, the admin API's checks) under a new id. */
  add(entry: Omit<ListEntry, 'id'>): Promise<StoredListEntry>;
  /** Whether there was an entry to delete. */
  delete(id: string): Promise<boolean>;
}

const ENTRY_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A short random id to delete an entry by. */
export function newListEntryId(): string {
  return `le_${randomBytes(9).toString('base64url')}`;
}

export const isListEntryId = (id: unknown): id is string => typeof id === 'string' && ENTRY_ID.test(id);

export function assertListEntryId(id: unknown, field = 'id'): asserts id is string {
  if (!isListEntryId(id)) throw new SluiceError('ERR_BAD_REQUEST', 'must be a list entry id (1-64 letters, digits, _ or -)', field);
}

export const listEntryNotFound = (id: string): SluiceError => new SluiceError('ERR_NOT_FOUND', `no list entry ${id}`);

// A row as either driver returns it (PostgreSQL: JSONB and Dates; SQLite: text).
export interface ListEntryRow {
  id: string;
  action: string;
  match_kind: string;
  match_name: string | null;
  match_value: string;
  routes: string[] | string | null;
  limit_id: string | null;
  expires_at: Date | string | null;
  note: string | null;
  created_at: Date | string;
}

const iso = (time: Date | string): string => (typeof time === 'string' ? time : time.toISOString());

/** The values to write, in LIST_COLUMNS order (without created_at); routes as JSON text, the expiry as an ISO time. */
export function listEntryValues(id: string, entry: Omit<ListEntry, 'id'>): (string | null)[] {
  const { match } = entry;
  const name = match.kind === 'header' ? match.header : match.kind === 'claim' ? match.claim : null;
  const value = match.kind === 'cidr' ? match.cidr : match.kind === 'tenant' ? match.tenant : match.valueHash;
  return [
    id,
    entry.action,
    match.kind,
    name,
    value,
    entry.routes === undefined ? null : JSON.stringify(entry.routes),
    entry.limit ?? null,
    entry.expiresAt === undefined ? null : new Date(entry.expiresAt).toISOString(),
    entry.note ?? null,
  ];
}

/** A list_entry row, parsed; one that fails is logged and skipped. */
export function entryFromRow(row: ListEntryRow, logger: RulesLogger, location: string): StoredListEntry[] {
  try {
    return [parseRow(row)];
  } catch (error) {
    logger.error({ err: errorMessage(error), store: location, entry: row.id }, 'skipping an invalid list entry row');
    return [];
  }
}

function parseRow(row: ListEntryRow): StoredListEntry {
  if (row.action !== 'allow' && row.action !== 'deny') throw new Error(`action ${row.action}`);
  const routes = typeof row.routes === 'string' ? (JSON.parse(row.routes) as unknown) : row.routes;
  if (routes !== null && (!Array.isArray(routes) || !routes.every(isValidId))) throw new Error('routes is not a list of route ids');
  const expiresAt = row.expires_at === null ? undefined : Date.parse(iso(row.expires_at));
  if (expiresAt !== undefined && !Number.isFinite(expiresAt)) throw new Error('expires_at is not a time');
  return {
    id: row.id,
    action: row.action as ListAction,
    match: matchOfRow(row),
    ...(routes !== null ? { routes: routes as string[] } : {}),
    ...(row.limit_id !== null ? { limit: row.limit_id } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    ...(row.note !== null ? { note: row.note } : {}),
    createdAt: iso(row.created_at),
  };
}

function matchOfRow(row: ListEntryRow): ListMatch {
  const { match_kind: kind, match_name: name, match_value: value } = row;
  if (kind === 'cidr' && parseNetwork(value) !== undefined) return { kind, cidr: value };
  if (kind === 'tenant' && isValidId(value)) return { kind, tenant: value };
  if (kind === 'header' && name !== null) return { kind, header: name.toLowerCase(), valueHash: value };
  if (kind === 'claim' && name !== null) return { kind, claim: name, valueHash: value };
  throw new Error(`match ${kind} ${kind === 'cidr' ? value : ''} does not parse`);
}

/** An entry as the admin API, the CLI and the page show it: one match field, the expiry as ISO time, a value only as its hash. */
export function listEntryView(entry: StoredListEntry): Record<string, unknown> {
  const { match } = entry;
  const matched =
    match.kind === 'cidr'
      ? { cidr: match.cidr }
      : match.kind === 'tenant'
        ? { tenant: match.tenant }
        : match.kind === 'header'
          ? { header: { name: match.header, valueSha256: match.valueHash } }
          : { claim: { name: match.claim, valueSha256: match.valueHash } };
  return {
    id: entry.id,
    action: entry.action,
    ...matched,
    ...(entry.routes !== undefined ? { routes: entry.routes } : {}),
    ...(entry.limit !== undefined ? { limit: entry.limit } : {}),
    ...(entry.expiresAt !== undefined ? { expiresAt: new Date(entry.expiresAt).toISOString() } : {}),
    ...(entry.note !== undefined ? { note: entry.note } : {}),
    createdAt: entry.createdAt,
  };
}
