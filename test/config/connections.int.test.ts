// The connection fields of the config file and their SLUICE_* variables:
// files read at load (so start and every reload see the current ones), every
// mistake named by field or variable, and no secret in any message.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Env } from '../../src/config/index.js';
import { loadConfig, parseConfig } from '../../src/decision-service/load-config.js';
import { knownVariables, unknownVariableMessage, unknownVariables } from '../../src/config/env-names.js';
import { redisTargetOf } from '../../src/config/redis-target.js';
import { pgClientConfig } from '../../src/rules/postgres/connection.js';
import { checkConnect, ROUTES } from '../helpers/connections.js';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

describe('connection settings in the config and the environment', () => {
  let dir: string;
  const parse = (yaml: string, env: Env = {}) => parseConfig(`${ROUTES}${yaml}`, { source: 'sluice.yaml', baseDir: dir, env });
  const refuses = (yaml: string, message: RegExp, env: Env = {}) => assert.throws(() => parse(yaml, env), message);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-conn-config-'));
    writeFileSync(join(dir, 'ca.pem'), PEM);
    writeFileSync(join(dir, 'client.pem'), PEM);
    writeFileSync(join(dir, 'client.key'), PEM.replaceAll('CERTIFICATE', 'PRIVATE KEY'));
    writeFileSync(join(dir, 'password'), 's3cret-from-file\n');
    writeFileSync(join(dir, 'two-lines'), 'first-secret-line\nsecond\n');
    writeFileSync(join(dir, 'not-pem.txt'), 'hello\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('store.tls files are read (relative to the config file) and the password file trimmed of its newline', () => {
    const { store } = parse('store:\n  url: redis://10.0.0.5:6380\n  username: sluice\n  passwordFile: password\n  tls: { ca: ca.pem, cert: client.pem, key: client.key, servername: redis.internal }\n');
    assert.equal(store.type, 'redis');
    assert.equal(store.password, 's3cret-from-file');
    assert.deepEqual(store.tls, { ca: PEM, cert: PEM, key: PEM.replaceAll('CERTIFICATE', 'PRIVATE KEY'), servername: 'redis.internal', rejectUnauthorized: true });
    assert.deepEqual(redisTargetOf(store), {
      url: 'redis://10.0.0.5:6380',
      username: 'sluice',
      password: 's3cret-from-file',
      tls: { rejectUnauthorized: true, ca: PEM, cert: PEM, key: PEM.replaceAll('CERTIFICATE', 'PRIVATE KEY'), servername: 'redis.internal' },
    });
  });

  it('the SLUICE_REDIS_* variables set the same fields, and a password variable leaves the URL alone', () => {
    const env = {
      SLUICE_REDIS_USERNAME: 'sluice',
      SLUICE_REDIS_PASSWORD_FILE: join(dir, 'password'),
      SLUICE_REDIS_TLS_CA: join(dir, 'ca.pem'),
      SLUICE_REDIS_TLS_CERT: join(dir, 'client.pem'),
      SLUICE_REDIS_TLS_KEY: join(dir, 'client.key'),
      SLUICE_REDIS_TLS_SERVERNAME: 'redis.internal',
    };
    const { store } = parse('store:\n  url: redis://10.0.0.5:6380\n', env);
    assert.equal(store.url, 'redis://10.0.0.5:6380', 'credentials in the environment do not drop the file’s Redis');
    assert.equal(store.username, 'sluice');
    assert.equal(store.password, 's3cret-from-file');
    assert.equal(store.tls?.servername, 'redis.internal');
    assert.equal(store.tls?.ca, PEM);
    assert.equal(parse('store:\n  cluster: ["10.0.0.1:7000"]\n', { SLUICE_REDIS_PASSWORD: 'pw-1234' }).store.cluster?.length, 1, 'nor the cluster');
  });

  it('Sentinel from the file, or from SLUICE_REDIS_SENTINELS / SLUICE_REDIS_SENTINEL_NAME (which replace the file’s url)', () => {
    const fromFile = parse('store:\n  sentinel: { name: mymaster, sentinels: ["10.0.0.1:26379", "10.0.0.2:26379"], passwordFile: password }\n').store;
    assert.equal(fromFile.type, 'redis');
    assert.deepEqual(redisTargetOf(fromFile), { sentinel: { name: 'mymaster', sentinels: ['10.0.0.1:26379', '10.0.0.2:26379'], password: 's3cret-from-file' } });
    const fromEnv = parse('store:\n  url: redis://10.0.0.5:6379\n', { SLUICE_REDIS_SENTINELS: '10.0.0.1:26379, 10.0.0.2:26379', SLUICE_REDIS_SENTINEL_NAME: 'mymaster' }).store;
    assert.equal(fromEnv.url, undefined);
    assert.deepEqual(fromEnv.sentinel?.sentinels, [{ host: '10.0.0.1', port: 26379 }, { host: '10.0.0.2', port: 26379 }]);
    assert.equal(fromEnv.sentinel?.name, 'mymaster');
  });

  it('each mistake names its field, and never the secret', () => {
    refuses('store:\n  url: redis://h:6379\n  tls: { ca: missing.pem }\n', /sluice\.yaml:\d+: store\.tls\.ca: cannot read missing\.pem: ENOENT/);
    refuses('store:\n  url: redis://h:6379\n  tls: { ca: not-pem.txt }\n', /store\.tls\.ca: not-pem\.txt is not a PEM file/);
    refuses('store:\n  url: redis://h:6379\n  tls: { cert: client.pem }\n', /store\.tls\.key: a client certificate needs both cert and key/);
    refuses('store:\n  url: redis://h:6379\n  password: inline-secret-1\n  passwordFile: password\n', /store\.passwordFile: give store\.password or passwordFile, not both/);
    refuses('store:\n  url: redis://user:url-secret@h:6379\n  username: sluice\n', /store\.url: carries a user or password, and store\.username\/password\/passwordFile is given too/);
    refuses('store:\n  url: redis://h:6379\n  passwordFile: two-lines\n', /store\.passwordFile: two-lines must hold the password on one line/);
    refuses('store:\n  url: redis://h:6379\n  sentinel: { name: m, sentinels: ["h:26379"] }\n', /store\.sentinel: give one of store\.url, store\.cluster and store\.sentinel, not url and sentinel/);
    refuses('store:\n  sentinel: { name: m, sentinels: [] }\n', /store\.sentinel\.sentinels: must list at least one sentinel/);
    refuses('store:\n  type: redis\n', /store\.type: redis needs store\.url, store\.cluster or store\.sentinel/);
    refuses('', /: SLUICE_REDIS_PASSWORD: store\.password: is for a Redis store: set store\.url, store\.cluster or store\.sentinel too/, { SLUICE_REDIS_PASSWORD: 'pw-for-nothing' });
    refuses('store:\n  tls: {}\n', /sluice\.yaml:\d+: store\.tls: is for a Redis store/);
    refuses('', /: SLUICE_REDIS_TLS_CA: store\.tls\.ca: cannot read \/nowhere\/ca\.pem: ENOENT$/, { SLUICE_REDIS_URL: 'redis://h:6379', SLUICE_REDIS_TLS_CA: '/nowhere/ca.pem' });
    for (const yaml of ['store:\n  url: redis://h:6379\n  passwordFile: two-lines\n', 'store:\n  url: redis://user:url-secret@h:6379\n  username: sluice\n']) {
      assert.throws(() => parse(yaml), (error: Error) => !/first-secret-line|url-secret/.test(error.message));
    }
  });

  it('database.tls (sslmode disable / require / verify-full with a CA) and database.passwordFile', () => {
    const { database } = parse('database:\n  url: postgres://sluice@db.internal/sluice\n  passwordFile: password\n  tls: { mode: verify-full, ca: ca.pem }\n');
    assert.deepEqual(database.tls, { mode: 'verify-full', ca: PEM });
    assert.equal(database.password, 's3cret-from-file');
    const client = pgClientConfig(database.url!, { password: 'p@ss:w/rd%', tls: database.tls });
    assert.deepEqual(client.ssl, { rejectUnauthorized: true, ca: PEM });
    assert.equal(decodeURIComponent(new URL(client.connectionString).password), 'p@ss:w/rd%', 'any character survives the URL');
    assert.deepEqual(pgClientConfig('postgres://u@h/db', { tls: { mode: 'require' } }).ssl, { rejectUnauthorized: false });
    assert.equal(pgClientConfig('postgres://u@h/db', { tls: { mode: 'disable' } }).ssl, false);
    const fromEnv = parse('', { SLUICE_DATABASE_URL: 'postgres://u@h/db', SLUICE_DATABASE_TLS_MODE: 'require', SLUICE_DATABASE_PASSWORD_FILE: join(dir, 'password') }).database;
    assert.deepEqual(fromEnv.tls, { mode: 'require', ca: undefined });
    assert.equal(fromEnv.password, 's3cret-from-file');
    refuses('database:\n  url: postgres://u@h/db?sslmode=require\n  tls: { mode: verify-full }\n', /database\.tls: database\.url has an sslmode too/);
    refuses('database:\n  url: postgres://u@h/db\n  tls: { mode: require, ca: ca.pem }\n', /database\.tls\.ca: is only used by mode verify-full/);
    refuses('database:\n  url: postgres://u@h/db\n  tls: { mode: prefer }\n', /database\.tls\.mode: must be one of disable, require, verify-full/);
    refuses('database:\n  passwordFile: password\n', /database\.passwordFile: needs database\.url/);
  });

  it('password files are read at each load: a reload sees a rotated password', () => {
    const file = join(dir, 'sluice.yaml');
    writeFileSync(file, `${ROUTES}store:\n  url: redis://h:6379\n  passwordFile: rotating\n`);
    writeFileSync(join(dir, 'rotating'), 'first-password');
    assert.equal(loadConfig(file, {}).store.password, 'first-password');
    writeFileSync(join(dir, 'rotating'), 'second-password');
    assert.equal(loadConfig(file, {}).store.password, 'second-password');
  });

  it('an unknown SLUICE_* variable is reported with the nearest known one', () => {
    assert.deepEqual(unknownVariables({ SLUICE_REDIS_SENTINAL: 'x', SLUICE_REDIS_URL: 'redis://h', SLUICE_DATABSE_URL: 'x', OTHER: 'y' }), [
      { variable: 'SLUICE_DATABSE_URL', nearest: 'SLUICE_DATABASE_URL' },
      { variable: 'SLUICE_REDIS_SENTINAL', nearest: 'SLUICE_REDIS_SENTINELS' },
    ]);
    assert.match(unknownVariableMessage({ variable: 'SLUICE_REDIS_SENTINAL', nearest: 'SLUICE_REDIS_SENTINELS' }), /SLUICE_REDIS_SENTINAL is not a Sluice variable and is ignored; did you mean SLUICE_REDIS_SENTINELS\?/);
    for (const name of ['SLUICE_CONFIG', 'SLUICE_ADMIN_URL', 'SLUICE_REDIS_TLS_SERVERNAME', 'SLUICE_DATABASE_TLS_CA', 'SLUICE_LOG_LEVEL']) assert.ok(knownVariables().includes(name), name);
  });

  it('every SLUICE_* variable src/ reads is known, and so is any a config file references', () => {
    const read = new Set<string>();
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts')) for (const match of readFileSync(path, 'utf8').matchAll(/(?:env\.|env\[|['"`])(SLUICE_[A-Z0-9_]+)/g)) read.add(match[1]!);
      }
    };
    walk(join(import.meta.dirname, '../../src'));
    assert.ok(read.has('SLUICE_REDIS_URL') && read.has('SLUICE_STORE_DEADLINE_MS'), 'the scan finds the reads');
    const known = knownVariables();
    assert.deepEqual([...read].filter((name) => !known.includes(name)), []);
    // the nginx recipe's example config reads SLUICE_REFUSED_STATUS through ${SLUICE_REFUSED_STATUS:-429}
    const recipe = readFileSync(join(import.meta.dirname, '../../examples/decision/sluice.yaml'), 'utf8');
    assert.deepEqual(unknownVariables({ SLUICE_REFUSED_STATUS: '403' }, recipe), []);
    assert.equal(unknownVariables({ SLUICE_REFUSED_STATUS: '403' }).length, 1, 'not known without the file');
  });

  it('sluice check warns of no variable its config file references', async () => {
    const { code, stderr } = await checkConnect(dir, `${ROUTES}# refused with \${SLUICE_REFUSED_STATUS:-429}\n`, { SLUICE_REFUSED_STATUS: '403' });
    assert.equal(code, 0, stderr);
    assert.doesNotMatch(stderr, /warning/);
  });

  it('sluice check warns of a misspelt variable at start, and still checks', async () => {
    const { code, stdout, stderr } = await checkConnect(dir, ROUTES, { SLUICE_REDIS_SENTINAL: '10.0.0.1:26379' });
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^no connection to check: the memory store and the embedded rule store$/m);
    assert.match(stderr, /^sluice: warning: SLUICE_REDIS_SENTINAL is not a Sluice variable and is ignored; did you mean SLUICE_REDIS_SENTINELS\?/m);
  });
});
