// Loads for the decision service bench: a @grpc/grpc-js client for the
// accuracy runs (the saturating gRPC load is h2load, grpc-h2load.ts), forward-auth /decide
// and proxied requests with autocannon, and nginx in front of Sluice with
// examples/decision/nginx.conf's auth_request (one process, access log off).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import * as grpc from '@grpc/grpc-js';
import { loadRls } from '../../src/decision-service/proto-files.js';
import { freePort } from '../../test/helpers/ports.js';
import { type Child, spawnServer } from './children.js';
import type { LoadResult } from './http-load.js';
import { TENANTS } from './http-load.js';
import { round } from './latency.js';
import { workDir } from './native-peers.js';

export interface DecisionAddresses {
  decisionUrl: string;
  grpcAddress: string;
  gatewayUrl: string;
}

/** The addresses bench/lib/servers/sluice-decision.ts reports as its URL. */
export function decisionAddresses(child: Child): DecisionAddresses {
  const [decisionUrl, grpcAddress, gatewayUrl] = child.url.split('|') as [string, string, string];
  return { decisionUrl, grpcAddress, gatewayUrl };
}

type Ask = (request: unknown) => Promise<{ overall_code: string }>;

export function grpcAsker(address: string): { ask: Ask; close(): void } {
  const { Client } = loadRls();
  const client = new Client(address, grpc.credentials.createInsecure()) as grpc.Client & Record<string, (request: unknown, done: (error: Error | null, answer: { overall_code: string }) => void) => void>;
  const ask: Ask = (request) => new Promise((done, fail) => client.ShouldRateLimit!(request, (error, answer) => (error ? fail(error) : done(answer))));
  return { ask, close: () => client.close() };
}

export const grpcRequest = (key: string, domain = 'bench') => ({ domain, descriptors: [{ entries: [{ key: 'api_key', value: key }] }] });

/** autocannon, 64 connections, on `path` with the forward-auth headers a proxy sends; its errors counted by message. */
export async function httpLoad(url: string, path: string, durationMs: number, forwarded: boolean): Promise<LoadResult> {
  const headers = (key: string): Record<string, string> => (forwarded ? { 'x-api-key': key, 'x-original-method': 'GET', 'x-original-uri': '/orders' } : { 'x-api-key': key });
  const errorKinds: Record<string, number> = {};
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ url, connections: 64, pipelining: 1, duration: durationMs / 1000, requests: TENANTS.map((key) => ({ method: 'GET', path, headers: headers(key) })) }, (error, done) => (error ? reject(error) : resolve(done)));
    instance.on('reqError', (error: Error) => {
      const kind = (error as NodeJS.ErrnoException).code ?? error.message;
      errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
    });
  });
  const completed = result.requests.total;
  return { requestsPerSec: round(completed / result.duration), p50Ms: result.latency.p50, p99Ms: result.latency.p99, non2xx: result.non2xx, errors: result.errors, completed, errorKinds };
}

/** nginx from examples/decision/nginx.conf (its upstreams pointed at ours), one process, no access log. */
export async function startNginxAuthRequest(upstream: string, decisionUrl: string): Promise<Child & { errorLog: string }> {
  const dir = workDir();
  const port = await freePort();
  const up = new URL(upstream);
  const sluice = new URL(decisionUrl);
  const conf = readFileSync(new URL('../../examples/decision/nginx.conf', import.meta.url), 'utf8')
    .replace('worker_processes 1;', `daemon off;\nmaster_process off;\nworker_processes 1;\npid ${dir}/nginx.pid;`)
    .replace('events { worker_connections 1024; }', 'events { worker_connections 4096; }')
    .replace('http {', `http {\n  access_log off;\n  client_body_temp_path ${dir}/body;\n  proxy_temp_path ${dir}/proxy;\n  fastcgi_temp_path ${dir}/fastcgi;\n  uwsgi_temp_path ${dir}/uwsgi;\n  scgi_temp_path ${dir}/scgi;`)
    .replace('listen 127.0.0.1:8000;', `listen 127.0.0.1:${port};`)
    .replace('server 127.0.0.1:8082;', `server ${sluice.hostname}:${sluice.port};`)
    .replace('server 127.0.0.1:8090;', `server ${up.hostname}:${up.port};`);
  writeFileSync(join(dir, 'nginx.conf'), conf);
  const child = await spawnServer('nginx + auth_request + Sluice', 'nginx', ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log')], port);
  return { ...child, errorLog: join(dir, 'error.log') };
}
