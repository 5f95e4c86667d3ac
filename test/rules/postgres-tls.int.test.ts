// The PostgreSQL rule store over TLS (a real server with ssl=on and a
// certificate the test makes with openssl) as a password user whose
// pg_hba.conf line is `hostssl`: any connection Sluice made without TLS, the
// pool's or the LISTEN connection's, would be refused.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { rulesOptions } from '../../src/app.js';
import { checkConnections } from '../../src/cli/check-connect.js';
import { parseRule } from '../../src/policies/rule.js';
import { pgClientConfig } from '../../src/rules/postgres/connection.js';
import { startRules } from '../../src/rules/runtime.js';
import { type PostgresServer, startPostgres } from '../helpers/postgres.js';
import { makeCertificates, type TestCertificates } from '../helpers/tls-certs.js';
import { silent } from '../helpers/gateway-support.js';
import { checkConnect, configIn, ROUTES } from '../helpers/connections.js';

const PASSWORD = 'pg-secret-never-logged-51c0';

describe('PostgreSQL rule store over TLS with a password file', () => {
  let certs: TestCertificates;
  let server: PostgresServer;
  const url = () => `postgres://sluice_app@127.0.0.1:${server.port}/sluice`;
  const configWith = (database: string) => configIn(certs.dir, `${ROUTES}database:\n  url: ${url()}\n${database}`);

  before(async () => {
    certs = makeCertificates();
    writeFileSync(join(certs.dir, 'pg-password'), `${PASSWORD}\n`);
    writeFileSync(join(certs.dir, 'pg-wrong-password'), 'not-it\n');
    server = await startPostgres({
      ssl: { cert: certs.serverCert, key: certs.serverKey },
      hba: ['local all all trust', 'hostssl sluice sluice_app 127.0.0.1/32 scram-sha-256', 'host all postgres 127.0.0.1/32 trust'],
    });
    const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${server.port}/sluice` });
    await admin.connect();
    await admin.query(`CREATE ROLE sluice_app LOGIN PASSWORD '${PASSWORD}'`);
    await admin.query('ALTER DATABASE sluice OWNER TO sluice_app');
    await admin.end();
  });
  after(async () => {
    await server?.stop();
    certs?.remove();
  });

  it('verify-full with the private CA: migrations, rules and change notifications all run over TLS', async () => {
    const config = configWith('  passwordFile: pg-password\n  tls: { mode: verify-full, ca: ca.pem }\n');
    // No full reload within the test: the change can only come through the LISTEN connection (hostssl only: TLS too).
    const runtime = await startRules({ ...rulesOptions(config, silent), refreshIntervalMs: 600_000 });
    try {
      await runtime.store.putRule('tls-tenant', 'orders', parseRule({ policy: 'token_bucket', capacity: 7, refillPerSecond: 1 }));
      for (let waited = 0; (runtime.cache.resolve('tls-tenant', 'orders').rule as { capacity?: number }).capacity !== 7; waited += 20) {
        assert.ok(waited < 20_000, 'the change never arrived: the LISTEN connection did not connect');
        await sleep(20);
      }
      const client = new pg.Client(pgClientConfig(config.database.url!, { password: config.database.password, tls: config.database.tls }));
      await client.connect();
      const { rows } = await client.query('SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
      await client.end();
      assert.equal(rows[0].ssl, true);
      assert.match(rows[0].version, /^TLSv1\.[23]$/);
    } finally {
      await runtime.close();
    }
  });

  it('each wrong setting is named by check --connect, never with the password', async () => {
    const cases: [string, RegExp][] = [
      ['  passwordFile: pg-password\n  tls: { mode: require }\n', /^$/],
      ['  passwordFile: pg-password\n  tls: { mode: verify-full, ca: other-ca.pem }\n', /^TLS handshake failed \(UNABLE_TO_VERIFY_LEAF_SIGNATURE\): unable to verify the first certificate; check database\.tls/],
      ['  passwordFile: pg-password\n  tls: { mode: disable }\n', /no pg_hba\.conf entry for host "127\.0\.0\.1", user "sluice_app", database "sluice", no encryption: the server wants TLS; set database\.tls\.mode/],
      ['  passwordFile: pg-wrong-password\n  tls: { mode: verify-full, ca: ca.pem }\n', /^authentication refused \(28P01\): password authentication failed for user "sluice_app"; check database\.url's user and database\.passwordFile$/],
    ];
    for (const [database, expected] of cases) {
      const [check] = await checkConnections(configWith(database), 5000);
      assert.match(check!.problem ?? '', expected, database);
      assert.ok(!(check!.problem ?? '').includes(PASSWORD) && !check!.target.includes(PASSWORD));
    }
  });

  it('sluice check --connect exits 1 on a refused password and says which server, without the password', async () => {
    const { code, stdout, stderr } = await checkConnect(certs.dir, `${ROUTES}database:\n  url: ${url()}\n  passwordFile: pg-wrong-password\n  tls: { mode: verify-full, ca: ca.pem }\n`);
    assert.equal(code, 1, stderr);
    assert.match(stderr, new RegExp(`^postgresql 127\\.0\\.0\\.1:${server.port}/sluice \\(tls verify-full\\): .*password authentication failed`, 'm'));
    assert.ok(!`${stdout}${stderr}`.includes(PASSWORD));
  });
});
