// Fresh databases on one PostgreSQL (a private test/helpers/postgres.ts, or the run's shared
// one: test/helpers/shared-servers.ts), so each
// store under test starts empty without a new initdb each time.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { PostgresServer } from './postgres.js';

export async function createDatabase(server: Pick<PostgresServer, 'url'>): Promise<string> {
  const name = `sluice_test_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one SQL statement against `url` on a short-lived connection. */
export async function sql(url: string, text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end();
  }
}
