// One process per embedded data dir. SQLite itself would survive two writers, but
// two gateways on one file would each think they own every bucket and rule, so a
// second process gets a clear error instead. The lock file holds the owner's PID;
// a lock left by a dead process is cleaned.
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { SluiceError } from '../../core/errors.js';

const LOCK_FILE = 'sluice.lock';
/** Dirs this process holds, so opening one twice in one process is refused too. */
const held = new Set<string>();

export interface DirLock {
  readonly path: string;
  release(): void;
}

export function lockDataDir(dir: string): DirLock {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      held.add(path);
      return { path, release: () => release(path) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = readOwner(path);
    if (owner === undefined && isFresh(path)) {
      // Another process created the lock and is writing its PID right now.
      throw new SluiceError('ERR_CONFIG_INVALID', `data dir ${dir} is being opened by another process (lock file ${path})`, 'SLUICE_DATA_DIR');
    }
    if (owner !== undefined && isAlive(owner) && (owner !== process.pid || held.has(path))) {
      throw new SluiceError(
        'ERR_CONFIG_INVALID',
        `data dir ${dir} is in use by process ${owner} (lock file ${path}); the embedded store allows one process per dir: stop it, or point SLUICE_DATA_DIR elsewhere`,
        'SLUICE_DATA_DIR',
      );
    }
    // A stale lock (its process is gone): remove it and try again.
    try {
      unlinkSync(path);
    } catch {
      // another process cleaned it first
    }
  }
  throw new SluiceError('ERR_CONFIG_INVALID', `could not take the lock ${path}`, 'SLUICE_DATA_DIR');
}

function release(path: string): void {
  if (!held.delete(path)) return;
  try {
    if (readOwner(path) === process.pid) unlinkSync(path);
  } catch {
    // already gone
  }
}

function readOwner(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isFresh(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs < 2000;
  } catch {
    return false;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, owned by another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
