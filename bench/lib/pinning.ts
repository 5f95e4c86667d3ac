// Pinned runs (taskset): the load generator and the upstream on core 0, the
// target and Redis on core 1, so the gateway under test never waits for a
// core behind the load that measures it. Linux only, 2 cores or more.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export const LOAD_CORE = '0';
export const TARGET_CORE = '1';
const ALL_CORES = `0-${availableParallelism() - 1}`;

/** Why pinning cannot run here, or undefined when it can. */
export function pinningUnavailable(): string | undefined {
  if (availableParallelism() < 2) return 'pinned runs: fewer than 2 cores';
  if (!tasksetRuns()) return 'pinned runs: no taskset binary (util-linux)';
  return undefined;
}

function tasksetRuns(): boolean {
  try {
    execFileSync('taskset', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The process and every process it started (nginx's workers, a gateway's workers). */
function withDescendants(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const listed = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
      if (listed) children.push(...listed.split(/\s+/).map(Number));
    }
  } catch {
    // gone, or /proc without children lists: the process alone
  }
  return [pid, ...children.flatMap(withDescendants)];
}

/** Every thread of `pid` (and, unless `alone`, of its descendants) on `cores`. */
export function pin(pid: number, cores: string, alone = false): void {
  for (const each of alone ? [pid] : withDescendants(pid)) {
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cores, String(each)], { stdio: 'ignore' });
  }
}

/** Back on every core. */
export function unpin(pid: number, alone = false): void {
  pin(pid, ALL_CORES, alone);
}
