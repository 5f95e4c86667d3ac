// The `store` and `database` sections as the connections take them: which
// Redis (one URL, Cluster seeds or Sentinel), TLS files and password files
// read now (so `sluice check`, start and every reload see the current ones),
// each error naming its field and never a secret's value.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { z } from 'zod';
import { ADAPTIVE_DEADLINE } from '../limiter/deadline/deadline.js';
import type { ConfigPath } from './config-error.js';
import type { tlsFilesSchema } from './connection-schema.js';
import type { ConfigFile } from './schema.js';
import type { DatabaseTls, ListenAddress, SluiceConfig, TlsFiles } from './types.js';

type Fail = (path: ConfigPath, message: string) => never;
type Files = { read: (path: ConfigPath, file: string) => string; fail: Fail };

export function storeOf(file: ConfigFile, fail: Fail, baseDir: string, listenAddress: (text: string) => ListenAddress): SluiceConfig['store'] {
  const store = file.store;
  const targets = (['url', 'cluster', 'sentinel'] as const).filter((name) => store[name] !== undefined);
  const type = store.type ?? (targets.length > 0 ? 'redis' : 'memory');
  if (type === 'redis' && targets.length === 0) fail(['store', 'type'], 'redis needs store.url, store.cluster or store.sentinel (or SLUICE_REDIS_URL / SLUICE_REDIS_CLUSTER / SLUICE_REDIS_SENTINELS)');
  if (targets.length > 1) fail(['store', targets[1]!], `give one of store.url, store.cluster and store.sentinel, not ${targets.join(' and ')}`);
  const connectionField = (['username', 'password', 'passwordFile', 'tls'] as const).find((name) => store[name] !== undefined);
  if (type === 'memory' && connectionField) fail(['store', connectionField], 'is for a Redis store: set store.url, store.cluster or store.sentinel too (or remove it)');
  if (store.url && (store.username || store.password || store.passwordFile) && /^rediss?:\/\/[^/]*@/.test(store.url)) {
    fail(['store', 'url'], 'carries a user or password, and store.username/password/passwordFile is given too: give the credentials in one place');
  }
  checkWait(store, type, fail);
  const files = fileReader(baseDir, fail);
  const sentinel = store.sentinel;
  return {
    type,
    url: store.url,
    cluster: store.cluster?.map(listenAddress),
    deadlineMs: store.deadlineMs,
    maxKeys: store.maxKeys,
    username: store.username,
    password: passwordOf(store, ['store'], files),
    tls: tlsOf(store.tls, ['store', 'tls'], files),
    sentinel: sentinel && {
      name: sentinel.name,
      sentinels: sentinel.sentinels.map(listenAddress),
      username: sentinel.username,
      password: passwordOf(sentinel, ['store', 'sentinel'], files),
      tls: tlsOf(sentinel.tls, ['store', 'sentinel', 'tls'], files),
    },
    wait: store.wait,
  };
}

/** WAIT needs one master's connection (not a Cluster's many) and must answer within the deadline. */
function checkWait(store: ConfigFile['store'], type: string, fail: Fail): void {
  if (!store.wait) return;
  if (type !== 'redis') fail(['store', 'wait'], 'is for a Redis store: set store.url or store.sentinel too (or remove it)');
  if (store.cluster) fail(['store', 'wait'], 'is not supported on Redis Cluster (WAIT has no key: it would reach any node, not the one that wrote)');
  // Unset, the deadline adapts (it learns WAIT's waits too) up to its ceiling.
  const [deadlineMs, what] = store.deadlineMs === undefined ? [ADAPTIVE_DEADLINE.ceilingMs, 'the adaptive deadline’s ceiling'] : [store.deadlineMs, 'store.deadlineMs'];
  if (store.wait.timeoutMs >= deadlineMs) fail(['store', 'wait', 'timeoutMs'], `must be below ${what} (${deadlineMs}): a WAIT still waiting at the deadline sends the decision to the fallback`);
}

export function databaseOf(file: ConfigFile, fail: Fail, baseDir: string): SluiceConfig['database'] {
  const { tls, passwordFile, ...database } = file.database;
  const files = fileReader(baseDir, fail);
  if (tls && database.url && /[?&]sslmode=/.test(database.url)) fail(['database', 'tls'], 'database.url has an sslmode too: give it in one place');
  if (tls?.ca && tls.mode !== 'verify-full') fail(['database', 'tls', 'ca'], `is only used by mode verify-full (mode is ${tls.mode})`);
  if (passwordFile && !database.url) fail(['database', 'passwordFile'], 'needs database.url (the user the password is for)');
  const databaseTls: DatabaseTls | undefined = tls && { mode: tls.mode, ca: tls.ca === undefined ? undefined : pem(files, ['database', 'tls', 'ca'], tls.ca) };
  return { ...database, url: database.url, tls: databaseTls, password: passwordFile === undefined ? undefined : secretLine(files, ['database', 'passwordFile'], passwordFile) };
}

function fileReader(baseDir: string, fail: Fail): Files {
  return {
    fail,
    read(path, file) {
      try {
        return readFileSync(resolve(baseDir, file), 'utf8');
      } catch (error) {
        // The path and the reason (ENOENT, EACCES), never the content.
        return fail(path, `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
    },
  };
}

/** `password` or `passwordFile`, not both. */
function passwordOf(section: { password?: string | undefined; passwordFile?: string | undefined }, at: ConfigPath, files: Files): string | undefined {
  if (section.password !== undefined && section.passwordFile !== undefined) files.fail([...at, 'passwordFile'], `give ${at.join('.')}.password or passwordFile, not both`);
  return section.passwordFile === undefined ? section.password : secretLine(files, [...at, 'passwordFile'], section.passwordFile);
}

/** A password file holds the password, maybe with a trailing newline (`echo pw > file`). */
function secretLine(files: Files, path: ConfigPath, file: string): string {
  const text = files.read(path, file).replace(/\r?\n$/, '');
  if (text === '' || text.includes('\n')) files.fail(path, `${file} must hold the password on one line`);
  return text;
}

function tlsOf(section: z.infer<typeof tlsFilesSchema> | undefined, at: ConfigPath, files: Files): TlsFiles | undefined {
  if (!section) return undefined;
  if ((section.cert === undefined) !== (section.key === undefined)) files.fail([...at, section.cert === undefined ? 'cert' : 'key'], 'a client certificate needs both cert and key');
  const read = (name: 'ca' | 'cert' | 'key') => (section[name] === undefined ? undefined : pem(files, [...at, name], section[name]));
  return { ca: read('ca'), cert: read('cert'), key: read('key'), servername: section.servername, rejectUnauthorized: section.rejectUnauthorized ?? true };
}

function pem(files: Files, path: ConfigPath, file: string): string {
  const text = files.read(path, file);
  if (!text.includes('-----BEGIN ')) files.fail(path, `${file} is not a PEM file (no -----BEGIN line)`);
  return text;
}
