// A private PostgreSQL server (its own initdb data dir, on a free loopback port), owned by one
// test file. Tests kill and restart it during traffic; the data dir, and so the data, survives.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './ports.js';

const run = promisify(execFile);
const DATABASE = 'sluice';
const PG_ROOT = '/usr/lib/postgresql';

export interface PostgresServer {
  readonly port: number;
  /** postgres://postgres@127.0.0.1:PORT/sluice (trust auth, no password). */
  readonly url: string;
  /** Stops the server at once (pg_ctl stop -m immediate); the data dir is kept. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data dir, after kill(). */
  start(): Promise<void>;
  /** kill() then start(): committed data is still there. */
  restart(): Promise<void>;
  /** Stops the server and removes its data dir. */
  stop(): Promise<void>;
  /** SIGSTOP to the postmaster and every backend: connections stay open, nothing answers. */
  freeze(): void;
  /** SIGCONT to the same processes: the server resumes where it stopped. */
  thaw(): void;
}

export interface PostgresOptions {
  /** ssl=on with this certificate and key (PEM files, copied into the server's own folder). */
  ssl?: { cert: string; key: string };
  /** pg_hba.conf's lines, replacing initdb's trust-all; keep one that lets `postgres` in over 127.0.0.1 without TLS (the helper's own checks). */
  hba?: string[];
}

export async function startPostgres(settings: PostgresOptions = {}): Promise<PostgresServer> {
  const bin = findBinDir();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-pg-'));
  const data = join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  // initdb refuses to run as root, so as root everything runs as the postgres user.
  if (asRoot) chownSync(dir, ...postgresIds());
  const command = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
  const exec = (tool: string, args: string[]) => run(...command(tool, args), { cwd: dir });

  const ssl = settings.ssl ? ` -c ssl=on -c ssl_cert_file=${join(dir, 'server.crt')} -c ssl_key_file=${join(dir, 'server.key')}` : '';
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off${ssl}`;
  let running = false;
  const start = async () => {
    await exec('pg_ctl', ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o', options, 'start']);
    running = true;
    await waitForConnection(port, 'postgres');
  };
  // Every process of this cluster: the postmaster (first line of its pid file) and its children.
  const clusterPids = (): number[] => {
    const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = spawnSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).stdout;
    return [postmaster, ...children.split('\n').filter(Boolean).map(Number)];
  };
  let frozen = false;
  // A backend pgrep listed may have exited before its signal (a connection that just closed): nothing left to stop.
  const signal = (pid: number, name: NodeJS.Signals) => {
    try {
      process.kill(pid, name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  };
  // The postmaster first, so it forks no new backend while the others are being stopped.
  const freeze = () => {
    for (const pid of clusterPids()) signal(pid, 'SIGSTOP');
    frozen = true;
  };
  const thaw = () => {
    if (!frozen) return;
    for (const pid of clusterPids().reverse()) signal(pid, 'SIGCONT');
    frozen = false;
  };
  const kill = async () => {
    thaw();
    if (!running) return;
    await exec('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    running = false;
  };
  // A crashed test file must not leave a postgres behind (pg_ctl detaches it from us).
  const killOnExit = () => {
    thaw();
    if (running) spawnSync(...command('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']), { cwd: dir, stdio: 'ignore' });
  };
  const stop = async () => {
    await kill();
    process.removeListener('exit', killOnExit);
    rmSync(dir, { recursive: true, force: true });
  };

  process.once('exit', killOnExit);
  try {
    await exec('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync']);
    ownFiles(dir, data, settings, asRoot ? postgresIds() : undefined);
    await start();
    await withClient(port, 'postgres', (client) => client.query(`create database ${DATABASE}`));
  } catch (error) {
    await stop().catch(() => {});
    throw error;
  }

  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/${DATABASE}`,
    kill,
    start,
    async restart() {
      await kill();
      await start();
    },
    stop,
    freeze,
    thaw,
  };
}

/** The TLS key and certificate, and pg_hba.conf, as the server wants them: its own, the key readable by it alone. */
function ownFiles(dir: string, data: string, settings: PostgresOptions, owner: [number, number] | undefined): void {
  const files: string[] = [];
  if (settings.ssl) {
    copyFileSync(settings.ssl.cert, join(dir, 'server.crt'));
    copyFileSync(settings.ssl.key, join(dir, 'server.key'));
    chmodSync(join(dir, 'server.key'), 0o600);
    files.push(join(dir, 'server.crt'), join(dir, 'server.key'));
  }
  if (settings.hba) {
    writeFileSync(join(data, 'pg_hba.conf'), `${settings.hba.join('\n')}\n`);
    files.push(join(data, 'pg_hba.conf'));
  }
  if (owner) for (const file of files) chownSync(file, ...owner);
}

/** The newest installed PostgreSQL's bin dir (e.g. /usr/lib/postgresql/15/bin). */
function findBinDir(): string {
  const versions = existsSync(PG_ROOT)
    ? readdirSync(PG_ROOT)
        .filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) throw new Error(`no PostgreSQL found under ${PG_ROOT}/*/bin (install postgresql)`);
  return join(PG_ROOT, versions[0]!, 'bin');
}

function postgresIds(): [number, number] {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return [uid, gid];
}

async function withClient<T>(port: number, database: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', database, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}

async function waitForConnection(port: number, database: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      await withClient(port, database, (client) => client.query('select 1'));
      return;
    } catch {
      // still starting or recovering
    }
    await sleep(100);
  }
  throw new Error(`postgres on port ${port} did not accept connections within ${timeoutMs} ms`);
}
