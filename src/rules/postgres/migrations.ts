// Versioned PostgreSQL migrations: migrations/NNN_name.sql, applied in order, all
// in one transaction under an advisory lock, so two instances starting together
// never race and a failing migration leaves the schema as it was.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

/** The repository's migrations/ folder, from src/rules or dist/rules alike. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));
const FILE_PATTERN = /^(\d{3})_([a-z0-9_]+)\.sql$/;
const LOCK_ID = 0x51_1ce; // any constant shared by every Sluice instance

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .map((file) => FILE_PATTERN.exec(file))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ version: Number(match[1]), name: match[2]!, sql: readFileSync(`${dir}/${match[0]}`, 'utf8') }))
    .sort((a, b) => a.version - b.version);
}

/** Applies the migrations not yet applied; returns the ones it applied. */
export async function migrate(client: pg.ClientBase, migrations = loadMigrations()): Promise<Migration[]> {
  const applied: Migration[] = [];
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INT PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`);
    const done = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      applied.push(migration);
    }
    await client.query('COMMIT');
    return applied;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}
