// `sluice migrate`: applies the PostgreSQL migrations (migrations/NNN_name.sql)
// to SLUICE_DATABASE_URL. `sluice start` does the same on its first store call.
import pg from 'pg';
import { CliError, type CliIo, processIo, runCli, UsageError } from './cli-io.js';
import { migrate } from '../rules/postgres/migrations.js';
import { describeUrl, isConnectionError } from '../rules/postgres/errors.js';

const USAGE = 'usage: SLUICE_DATABASE_URL=postgres://... sluice migrate\n';

export function run(argv: string[], io: CliIo = processIo): Promise<number> {
  return runCli(io, USAGE, async () => {
    if (argv.length > 0) throw new UsageError(`unexpected argument ${argv[0]}`);
    const url = io.env.SLUICE_DATABASE_URL;
    if (!url) throw new UsageError('SLUICE_DATABASE_URL is not set');
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
    client.on('error', () => {});
    try {
      await client.connect();
      const applied = await migrate(client);
      if (applied.length === 0) io.out(`${describeUrl(url)}: schema up to date\n`);
      for (const m of applied) io.out(`applied ${String(m.version).padStart(3, '0')}_${m.name}\n`);
      return 0;
    } catch (error) {
      throw new CliError(isConnectionError(error) ? 'ERR_STORE_UNAVAILABLE' : 'ERR_MIGRATION_FAILED', `${describeUrl(url)}: ${(error as Error).message}`);
    } finally {
      await client.end().catch(() => {});
    }
  });
}
