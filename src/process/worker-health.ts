// What the workers decide with, for the instance's /readyz. Each worker has its
// own breaker in front of Redis; the primary's admin API has no engine on the
// request path, so each worker reports its engine's health (Redis or the local
// fallback) when it changes, and /readyz shows every worker's and the worst.
import type { EngineHealth } from '../limiter/engine/engine.js';

/** How often a worker compares its engine's health with what it last reported. */
export const HEALTH_CHECK_MS = 500;

/** Worker side: sends the health now and whenever it changes; returns the stop. */
export function reportHealth(health: () => EngineHealth, send: (health: EngineHealth) => void, everyMs = HEALTH_CHECK_MS): () => void {
  let last = '';
  const check = () => {
    const now = health();
    const key = JSON.stringify(now);
    if (key === last) return;
    last = key;
    send(now);
  };
  check();
  const timer = setInterval(check, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

export interface WorkerEngineHealth extends EngineHealth {
  pid: number;
}

/** The instance's engine health: the fallback if any worker decides on it, each worker's below. */
export interface InstanceEngineHealth extends EngineHealth {
  workers: WorkerEngineHealth[];
}

/** Primary side: the last health each worker reported. */
export class WorkersHealth {
  private readonly byPid = new Map<number, EngineHealth>();

  note(pid: number, health: EngineHealth): void {
    this.byPid.set(pid, health);
  }

  /** Over the workers serving now (`pids`); a worker gone is forgotten, one not reported yet is left out. */
  combined(pids: readonly number[]): InstanceEngineHealth {
    for (const pid of this.byPid.keys()) if (!pids.includes(pid)) this.byPid.delete(pid);
    const workers = pids.flatMap((pid) => {
      const health = this.byPid.get(pid);
      return health ? [{ pid, ...health }] : [];
    });
    const onFallback = workers.filter((worker) => worker.mode === 'fallback').length;
    const storeReachable = workers.every((worker) => worker.storeReachable);
    const deadlines = workers.flatMap((worker) => (worker.deadlineMs !== undefined ? [worker.deadlineMs] : []));
    return {
      mode: onFallback > 0 ? 'fallback' : 'redis',
      storeReachable,
      detail: `${onFallback} of ${workers.length} workers on the local fallback`,
      // The longest of the workers' deadlines (each adapts to the same Redis on its own).
      ...(deadlines.length > 0 ? { deadlineMs: Math.max(...deadlines) } : {}),
      workers,
    };
  }
}
