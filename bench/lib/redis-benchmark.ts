// The ceiling: redis-benchmark (Redis's own C client) sending one EVALSHA on a
// fixed key with 64 connections, no pipelining.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface CeilingResult {
  requestsPerSec: number;
  /** Set when redis-benchmark failed; the figures are then NaN. */
  error?: string;
  p50Ms: number;
  p99Ms: number;
}

export async function redisBenchmark(port: number, requests: number, command: (string | number)[]): Promise<CeilingResult> {
  try {
    const { stdout } = await run('redis-benchmark', ['-h', '127.0.0.1', '-p', String(port), '-c', '64', '-n', String(requests), '-P', '1', '--csv', ...command.map(String)], {
      timeout: 120_000,
    });
    // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
    const lines = stdout.trim().split('\n').filter((line) => line.startsWith('"'));
    const header = lines[0]!.split(',').map((cell) => cell.replaceAll('"', ''));
    const values = lines[1]!.split(',').map((cell) => cell.replaceAll('"', ''));
    const field = (name: string) => Number(values[header.indexOf(name)]);
    return { requestsPerSec: field('rps'), p50Ms: field('p50_latency_ms'), p99Ms: field('p99_latency_ms') };
  } catch (error) {
    const detail = error as { stdout?: string; stderr?: string; message?: string };
    const text = `${detail.stderr ?? ''} ${detail.stdout ?? ''}`.trim() || String(detail.message);
    return { requestsPerSec: Number.NaN, p50Ms: Number.NaN, p99Ms: Number.NaN, error: text.slice(0, 300) };
  }
}
