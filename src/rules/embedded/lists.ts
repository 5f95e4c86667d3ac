// The embedded store's allow and deny list entries (list_entry in the SQLite
// file: schema.ts, mirroring migrations/009): written in process, each
// change announced to the store's watchers after the write, as plans are.
import type { ListEntry } from '../../lists/types.js';
import type { SqliteAccess } from './overrides.js';
import { assertListEntryId, entryFromRow, LIST_COLUMNS, type ListEntryRow, type ListEntryStore, listEntryValues, newListEntryId, type StoredListEntry } from '../list-entries.js';

export class EmbeddedListStore implements ListEntryStore {
  constructor(private readonly access: SqliteAccess) {}

  private rows(rows: unknown[]): StoredListEntry[] {
    return (rows as ListEntryRow[]).flatMap((row) => entryFromRow(row, this.access.logger, this.access.location));
  }

  async list(): Promise<StoredListEntry[]> {
    return this.rows(this.access.db.prepare(`SELECT ${LIST_COLUMNS} FROM list_entry ORDER BY created_at, id`).all());
  }

  async get(id: string): Promise<StoredListEntry | undefined> {
    assertListEntryId(id);
    const row = this.access.db.prepare(`SELECT ${LIST_COLUMNS} FROM list_entry WHERE id = ?`).get(id);
    return row ? this.rows([row])[0] : undefined;
  }

  async add(entry: Omit<ListEntry, 'id'>): Promise<StoredListEntry> {
    const id = newListEntryId();
    const createdAt = new Date().toISOString();
    const stored = this.access.change(() => {
      this.access.db.prepare(`INSERT INTO list_entry (${LIST_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(...listEntryValues(id, entry), createdAt);
      const row = this.access.db.prepare(`SELECT ${LIST_COLUMNS} FROM list_entry WHERE id = ?`).get(id);
      const read = this.rows([row])[0];
      if (!read) throw new Error('the stored list entry does not read back');
      return read;
    });
    this.access.emit({ kind: 'list', id });
    return stored;
  }

  async delete(id: string): Promise<boolean> {
    assertListEntryId(id);
    const deleted = this.access.change(() => this.access.db.prepare('DELETE FROM list_entry WHERE id = ?').run(id).changes === 1);
    if (deleted) this.access.emit({ kind: 'list', id });
    return deleted;
  }
}
