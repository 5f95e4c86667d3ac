// Where a process's CPU time went, from the .cpuprofile node's `--cpu-prof`
// writes on exit: self time of every sample, grouped by where the function
// lives (Sluice's folders, the libraries, node's core, GC), idle left out.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Child, measuredRun } from './children.js';
import { round } from './latency.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

interface Profile {
  endTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileShare {
  where: string;
  /** Share of the non-idle CPU time, in %. */
  percent: number;
}

// Sluice's folders as run from source (tsx) or built (dist/, what bench:cost forks).
const GROUPS: [RegExp, string][] = [
  [/\/(src|dist)\/decision\//, 'Sluice decision service (src/decision-service)'],
  [/\/(src|dist)\/(gateway|limits)\//, 'Sluice gateway and limits (src/gateway, src/request-limits)'],
  [/\/(src|dist)\/(limiter|dashboard)\//, 'Sluice engine (src/limiter, dashboard observer)'],
  [/\/(src|dist)\/(stores|policies|core|rules)\//, 'Sluice store, policies, core, rules'],
  [/node_modules\/(@grpc|protobufjs|@protobufjs)/, 'gRPC and protobuf (@grpc/grpc-js, protobufjs)'],
  [/node_modules\/ioredis|node_modules\/redis-parser|node_modules\/denque/, 'ioredis'],
  [/node_modules\/undici/, 'undici (upstream client)'],
  [/node_modules\//, 'other libraries'],
  [/^node:(_http|http)(?!2)/, 'node http'],
  [/^node:(internal\/)?http2/, 'node http2'],
  [/^node:(net|stream|internal\/streams|internal\/stream_base)|^node:internal\/(net|stream)/, 'node net and streams'],
  [/^node:/, 'node core, other'],
];

function groupOf(frame: ProfileNode['callFrame']): string | undefined {
  if (frame.functionName === '(idle)') return undefined;
  if (frame.functionName === '(garbage collector)') return 'garbage collector';
  if (frame.functionName === '(program)') return 'native (program: V8, libuv, syscalls)';
  const url = frame.url.replace(/^file:\/\//, '');
  for (const [pattern, name] of GROUPS) if (pattern.test(url)) return name;
  return url === '' ? 'native (program: V8, libuv, syscalls)' : 'other';
}

/** Main-thread profiles only: `CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile`, thread 0 (not tsx's loader thread). */
const MAIN_THREAD = /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/;

/**
 * The shares of the main-thread profile in `dir`, largest first, above 1 %:
 * only the last `windowMs` before the process stopped (the measured load and
 * the shutdown after it), so startup and module loading stay out.
 */
export function summariseProfiles(dir: string, windowMs: number): ProfileShare[] {
  const totals = new Map<string, number>();
  let all = 0;
  for (const file of readdirSync(dir).filter((name) => MAIN_THREAD.test(name))) {
    const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as Profile;
    const byId = new Map(profile.nodes.map((node) => [node.id, node]));
    // Sample i happened at endTime − (the deltas after it); walk back from the end.
    let at = profile.endTime;
    const from = profile.endTime - windowMs * 1000;
    const times = profile.timeDeltas.map(() => 0);
    for (let index = profile.samples.length - 1; index >= 0; index--) {
      times[index] = at;
      at -= profile.timeDeltas[index] ?? 0;
    }
    profile.samples.forEach((id, index) => {
      if ((times[index] ?? 0) < from) return;
      const group = groupOf(byId.get(id)!.callFrame);
      if (group === undefined) return;
      const micros = profile.timeDeltas[index] ?? 0;
      totals.set(group, (totals.get(group) ?? 0) + micros);
      all += micros;
    });
  }
  return [...totals]
    .map(([where, micros]) => ({ where, percent: round((micros / Math.max(1, all)) * 100, 1) }))
    .filter((share) => share.percent >= 1)
    .sort((a, b) => b.percent - a.percent);
}

/**
 * A fresh server (`bench/lib/servers/<file>`) under --cpu-prof: `load` once to
 * warm it up, once measured; what the measured load returned, and where the
 * server's time went during it.
 */
export function profiledRun<T>(name: string, file: string, args: object, load: (child: Child) => Promise<T>): Promise<{ result: T; shares: ProfileShare[] }> {
  const flags = (dir: string) => ['--cpu-prof', `--cpu-prof-dir=${dir}`];
  return measuredRun(`${name} (profiled)`, file, args, flags, load, async (child, dir) => {
    const began = Date.now();
    const result = await load(child);
    const loadMs = Date.now() - began;
    await child.stop(); // node writes the profile on exit
    return { result, shares: summariseProfiles(dir, loadMs) };
  });
}
