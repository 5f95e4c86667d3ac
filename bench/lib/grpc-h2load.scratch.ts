// scratch: measure CPU per decision gRPC (h2load) vs forward-auth (autocannon)
import { writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import protobuf from 'protobufjs';
import { forkServer } from './children.js';
import { decisionAddresses, httpLoad } from './decision-load.js';
import { benchRedis } from './servers.js';
import { parseRule } from '../../src/core/rule.js';
import { PROTO_DIR } from '../../src/decision/proto-files.js';

const NEVER = parseRule({ policy: 'token_bucket', capacity: 1_000_000_000, refillPerSecond: 1_000_000_000 });
const root = new protobuf.Root();
root.resolvePath = (_o, t) => `${PROTO_DIR}/${t}`;
root.loadSync('envoy/service/ratelimit/v3/rls.proto');
const Req = root.lookupType('envoy.service.ratelimit.v3.RateLimitRequest');
const msg = Req.encode(Req.fromObject({ domain: 'bench', descriptors: [{ entries: [{ key: 'api_key', value: 'bench-tenant-1' }] }] })).finish();
const frame = Buffer.alloc(5 + msg.length); frame.writeUInt32BE(msg.length, 1); Buffer.from(msg).copy(frame, 5);
writeFileSync('/tmp/grpc-exp/body.bin', frame);
const redis = await benchRedis();
const upstream = await forkServer('up', 'upstream.ts', {});
const sluice = await forkServer('s', 'sluice-decision.ts', { upstream: upstream.url, redisUrl: redis.url, rule: NEVER }, process.env.NODEARGS ? process.env.NODEARGS.split(' ') : []);
const { decisionUrl, grpcAddress } = decisionAddresses(sluice);
const secs = Number(process.env.SECS ?? 5);
const h2 = () => { const out = execFileSync('h2load', ['-D', String(secs), '-c', process.env.CONNS ?? '1', '-m', String(64 / Number(process.env.CONNS ?? 1)), '-H', 'content-type: application/grpc', '-H', 'te: trailers', '-d', '/tmp/grpc-exp/body.bin', `http://${grpcAddress}/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit`], { encoding: 'utf8' }); const m = /requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out)!; return { done: Number(m[4]), failed: Number(m[5]), line: out.split('\n').filter(l=>/finished in|status codes|requests:/.test(l)).join(' | ') }; };
try {
  h2(); if (!process.env.ONLY) await httpLoad(decisionUrl, "/decide", 2000, true);
  for (let i = 0; i < Number(process.env.REPS ?? 2); i++) {
    let c0 = sluice.cpuMicros(); const g = h2(); const gcpu = (sluice.cpuMicros() - c0) / g.done;
    if (process.env.ONLY) { console.log("grpc", gcpu.toFixed(1), g.line); continue; }
    c0 = sluice.cpuMicros(); const f = await httpLoad(decisionUrl, '/decide', secs * 1000, true); const fcpu = (sluice.cpuMicros() - c0) / f.completed;
    console.log(`grpc ${gcpu.toFixed(1)} us (${g.line}) fa ${fcpu.toFixed(1)} us (${f.requestsPerSec}/s err ${f.errors}) ratio ${(gcpu / fcpu).toFixed(2)}`);
  }
} finally { await sluice.stop(); await upstream.stop(); await redis.release(); }
