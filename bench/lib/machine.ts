// The machine a run happened on, recorded beside every figure.
import { execFileSync } from 'node:child_process';
import { availableParallelism, cpus, totalmem } from 'node:os';

export interface MachineInfo {
  date: string;
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  redis: string;
  platform: string;
}

export function machineInfo(): MachineInfo {
  let redis = 'unknown';
  try {
    redis = /v=(\S+)/.exec(execFileSync('redis-server', ['--version'], { encoding: 'utf8' }))?.[1] ?? redis;
  } catch {
    // no redis-server on PATH: the benches could not have run either
  }
  return {
    date: new Date().toISOString(),
    cores: availableParallelism(),
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    redis,
    platform: `${process.platform} ${process.arch}`,
  };
}
