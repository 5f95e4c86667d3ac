// Plans on PostgreSQL (the run's shared server, or a private one): the shared checks of
// plans-suite.ts, the second instance reading through its own store and LISTEN.
import { after, before } from 'node:test';
import { silentLogger } from '../../src/rules/logger.js';
import { PostgresRuleStore } from '../../src/rules/postgres/store.js';
import { createDatabase } from '../helpers/postgres-db.js';
import { type PostgresHost, postgresForFile } from '../helpers/shared-servers.js';
import { plansSuite } from './plans-suite.js';

let server: PostgresHost;
before(async () => {
  server = await postgresForFile();
});
after(async () => {
  await server?.stop();
});

plansSuite('PostgreSQL', async () => {
  const url = await createDatabase(server);
  const [store, peer] = [new PostgresRuleStore({ connectionString: url, logger: silentLogger }), new PostgresRuleStore({ connectionString: url, logger: silentLogger })];
  return { store, peer, close: async () => void (await Promise.all([store.close(), peer.close()])) };
});
