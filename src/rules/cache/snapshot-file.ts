// The last good rule set on disk (JSON, in the data dir), so an instance that
// starts while the rule store is unreachable can still serve the rules and keys
// it last saw (overrides too). It holds key hashes, never keys, and is written atomically.
import { readFileSync } from 'node:fs';
import { writeFile, rename, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { ApiKeyRecord } from '../store.js';
import type { StoredListEntry } from '../list-entries.js';
import type { PlanAssignment, StoredPlan } from '../plans.js';
import type { StoredOverride, StoredRule } from '../types.js';

export const SNAPSHOT_FILE = 'rules-snapshot.json';

export interface SnapshotFile {
  format: 1;
  savedAt: string;
  source: string;
  rules: StoredRule[];
  keys: Pick<ApiKeyRecord, 'id' | 'tenant' | 'hash'>[];
  /** Absent in files written before overrides existed. */
  overrides?: StoredOverride[];
  /** Absent in files written before plans existed. */
  plans?: StoredPlan[];
  assignments?: PlanAssignment[];
  /** Absent in files written before lists were stored. */
  lists?: StoredListEntry[];
}

export async function writeSnapshot(path: string, snapshot: SnapshotFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, JSON.stringify(snapshot), { mode: 0o600 });
  await rename(temp, path);
}

/** The snapshot at `path`, or undefined when there is none; throws on a corrupt file. */
export function readSnapshot(path: string): SnapshotFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const data = JSON.parse(text) as SnapshotFile;
  if (data.format !== 1 || !Array.isArray(data.rules) || !Array.isArray(data.keys)) throw new Error(`${path} is not a Sluice rules snapshot`);
  return data;
}
