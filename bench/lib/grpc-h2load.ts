// gRPC ShouldRateLimit load from h2load (nghttp2-client): one HTTP/2
// connection, 64 concurrent streams, each a unary call (the gRPC headers and
// one length-prefixed RateLimitRequest as the body). A native client, so the
// load generator is not what bounds the decisions/s. Latencies from h2load's
// per-request log; h2load cannot read trailers, so a gRPC error shows only in
// the answers' count, not per call (the accuracy runs check codes).
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { PROTO_DIR } from '../../src/decision-service/proto-files.js';
import type { LoadResult } from './http-load.js';
import { LatencyRecorder, round } from './latency.js';

export const RLS_PATH = '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit';

export function h2loadExists(): boolean {
  try {
    execFileSync('h2load', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The framed RateLimitRequest h2load sends: domain `bench`, one descriptor api_key=`key`. */
export function framedRequest(key: string): Buffer {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => `${PROTO_DIR}/${target}`;
  root.loadSync('envoy/service/ratelimit/v3/rls.proto', { keepCase: true });
  const type = root.lookupType('envoy.service.ratelimit.v3.RateLimitRequest');
  const message = type.encode(type.fromObject({ domain: 'bench', descriptors: [{ entries: [{ key: 'api_key', value: key }] }] })).finish();
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  frame.set(message, 5);
  return frame;
}

/** `concurrency` streams on one connection for `durationMs`, every call the same request. */
export async function grpcH2load(address: string, durationMs: number, key = 'bench-tenant-0', concurrency = 64): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-h2load-'));
  try {
    writeFileSync(join(dir, 'body'), framedRequest(key));
    const args = ['-D', String(Math.max(1, Math.round(durationMs / 1000))), '-c', '1', '-m', String(concurrency), '-H', 'content-type: application/grpc', '-H', 'te: trailers', '-d', join(dir, 'body'), '--log-file', join(dir, 'log'), `http://${address}${RLS_PATH}`];
    const out = await new Promise<string>((resolve, reject) => execFile('h2load', args, { maxBuffer: 1 << 20 }, (error, stdout) => (error ? reject(error) : resolve(stdout))));
    return resultOf(out, readFileSync(join(dir, 'log'), 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function resultOf(out: string, log: string): LoadResult {
  const counts = /requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/.exec(out);
  const seconds = /finished in ([\d.]+)(m?s)/.exec(out);
  if (!counts || !seconds) throw new Error(`h2load printed no summary: ${out}`);
  const [succeeded, failed, errored, timeout] = counts.slice(1).map(Number) as [number, number, number, number];
  const elapsedS = Number(seconds[1]) / (seconds[2] === 'ms' ? 1000 : 1);
  // --log-file: start time (µs), status, duration (µs) per request
  const recorder = new LatencyRecorder();
  for (const line of log.split('\n')) {
    const fields = line.split('\t');
    if (fields.length === 3 && fields[1] === '200') recorder.recordMs(Number(fields[2]) / 1000);
  }
  const latency = recorder.summary();
  return { requestsPerSec: round(succeeded / elapsedS), p50Ms: round(latency.p50Us / 1000, 3), p99Ms: round(latency.p99Us / 1000, 3), non2xx: failed, errors: errored + timeout, completed: succeeded };
}
