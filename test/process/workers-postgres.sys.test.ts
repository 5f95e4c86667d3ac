// 2 workers with rules and keys in PostgreSQL: the primary holds the one
// LISTEN connection and relays each change, so a rule, a new key and a
// revocation written through the admin API reach both workers.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { startUpstream, type TestUpstream } from '../helpers/gateway-support.js';
import { type PostgresServer, startPostgres } from '../helpers/postgres.js';
import { type RedisServer, startRedis } from '../helpers/redis-server.js';
import { freshRequest, SluiceProcess, writeWorkersConfig } from '../helpers/sluice-process.js';

describe('sluice start --workers 2 with PostgreSQL', () => {
  let redis: RedisServer;
  let postgres: PostgresServer;
  let upstream: TestUpstream;
  let dir: string;
  let sluice: SluiceProcess;
  let gateway: string;

  before(async () => {
    [redis, postgres, upstream] = await Promise.all([startRedis(), startPostgres(), startUpstream()]);
    const setup = await writeWorkersConfig(
      'sluice-workers-pg-',
      redis.port,
      `database: { url: '${postgres.url}' }
workers: 2
routes: [{ id: r, path: /r, upstream: '${upstream.url}' }]
`,
    );
    ({ dir, gateway } = setup);
    sluice = new SluiceProcess(setup.file, setup.adminUrl);
    await sluice.logged('sluice workers serving');
  });
  after(async () => {
    sluice?.kill();
    await upstream?.close();
    await Promise.all([redis?.stop(), postgres?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Ten fresh connections in a row, so both workers answer. */
  const tenAnswers = (key: string) => Promise.all(Array.from({ length: 10 }, () => freshRequest(`${gateway}/r`, { 'x-api-key': key })));

  it('a rule, a key and its revocation reach both workers', async () => {
    const created = await sluice.admin('POST', '/keys', { tenant: 'acme' });
    assert.equal(created.status, 201, created.text);
    assert.equal((await sluice.admin('PUT', '/rules/acme/r', { policy: 'token_bucket', capacity: 555, refillPerSecond: 555 })).status, 200);
    await sluice.until('both workers know the key and the rule', async () => (await tenAnswers(created.body.key)).every(({ status, limit }) => status === 200 && limit === '555'));
    assert.equal((await sluice.admin('DELETE', `/keys/${created.body.id}`)).status, 200);
    await sluice.until('both workers refuse the revoked key', async () => (await tenAnswers(created.body.key)).every(({ status }) => status === 401));
    assert.equal((await sluice.admin('GET', '/readyz')).body.store.kind, 'postgres');
  });
});
