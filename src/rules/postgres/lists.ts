// The PostgreSQL store's allow and deny list entries (list_entry:
// migrations/009): reads and writes through the store's bounded `query` and
// deadline-carrying `write`, as plans and overrides are.
import type { ListEntry } from '../../lists/types.js';
import { assertListEntryId, entryFromRow, LIST_COLUMNS, type ListEntryRow, type ListEntryStore, listEntryValues, newListEntryId, type StoredListEntry } from '../list-entries.js';
import type { PgAccess } from './overrides.js';

export class PgListStore implements ListEntryStore {
  constructor(private readonly db: PgAccess) {}

  async list(): Promise<StoredListEntry[]> {
    const result = await this.db.query<ListEntryRow>(`SELECT ${LIST_COLUMNS} FROM list_entry ORDER BY created_at, id`, [], this.db.fullLoadTimeoutMs);
    return result.rows.flatMap((row) => entryFromRow(row, this.db.logger, this.db.location));
  }

  async get(id: string): Promise<StoredListEntry | undefined> {
    assertListEntryId(id);
    const result = await this.db.query<ListEntryRow>(`SELECT ${LIST_COLUMNS} FROM list_entry WHERE id = $1`, [id]);
    const row = result.rows[0];
    return row ? entryFromRow(row, this.db.logger, this.db.location)[0] : undefined;
  }

  async add(entry: Omit<ListEntry, 'id'>): Promise<StoredListEntry> {
    const id = newListEntryId();
    const sql = `INSERT INTO list_entry (${LIST_COLUMNS.replace(', created_at', '')}) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8::timestamptz, $9) RETURNING ${LIST_COLUMNS}`;
    return this.db.write<ListEntryRow, StoredListEntry>(sql, listEntryValues(id, entry), (result) => {
      const stored = entryFromRow(result.rows[0]!, this.db.logger, this.db.location)[0];
      if (!stored) throw new Error('the stored list entry does not read back');
      return stored;
    });
  }

  async delete(id: string): Promise<boolean> {
    assertListEntryId(id);
    return this.db.write('DELETE FROM list_entry WHERE id = $1', [id], (result) => result.rowCount === 1);
  }
}
