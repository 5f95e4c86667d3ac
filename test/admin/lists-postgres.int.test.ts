// Stored allow and deny lists on PostgreSQL (a private server this test
// starts): the shared checks of lists-suite.ts, the second instance reading
// through its own store and LISTEN.
import { after, before } from 'node:test';
import { silentLogger } from '../../src/rules/logger.js';
import { PostgresRuleStore } from '../../src/rules/pg-store.js';
import { createDatabase } from '../helpers/postgres-db.js';
import { type PostgresServer, startPostgres } from '../helpers/postgres.js';
import { listsSuite } from './lists-suite.js';

let server: PostgresServer;
before(async () => {
  server = await startPostgres();
});
after(async () => {
  await server?.stop();
});

listsSuite('PostgreSQL', async () => {
  const url = await createDatabase(server);
  const [store, peer] = [new PostgresRuleStore({ connectionString: url, logger: silentLogger }), new PostgresRuleStore({ connectionString: url, logger: silentLogger })];
  return { store, peer, close: async () => void (await Promise.all([store.close(), peer.close()])) };
});
