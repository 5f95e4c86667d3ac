// The servers an int file may share with the other files of its run. scripts/run-tests.mjs
// starts one PostgreSQL for the whole int tier (one initdb instead of one per file) and names
// it in TEST_POSTGRES_URL; a file then works in databases of its own
// (test/helpers/postgres-db.ts createDatabase), so files never see each other's rows nor
// LISTEN/NOTIFY channels, which PostgreSQL keeps per database. Run alone (`node --test`), a file
// gets a private server as before. A file that kills, freezes or reconfigures its server
// (TLS, pg_hba) keeps calling startPostgres.
import { type PostgresServer, startPostgres } from './postgres.js';

/** Where a file's databases live; stop() stops a private server and leaves a shared one running. */
export type PostgresHost = Pick<PostgresServer, 'port' | 'url' | 'stop'>;

export async function postgresForFile(): Promise<PostgresHost> {
  const shared = process.env.TEST_POSTGRES_URL;
  if (!shared) return startPostgres();
  return { port: Number(new URL(shared).port), url: shared, stop: async () => {} };
}
