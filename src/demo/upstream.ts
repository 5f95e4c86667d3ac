// A tiny upstream for the quick start: answers every request with JSON saying
// what it received, so `sluice start --demo-upstream` works with nothing else;
// a POST under /v1/ is answered as an OpenAI-compatible completion (llm-upstream.ts).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerCompletion } from './llm-upstream.js';

export interface DemoUpstream {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

export const DEMO_UPSTREAM_PORT = 8090;

export function startDemoUpstream(options: { host?: string; port?: number } = {}): Promise<DemoUpstream> {
  const server = createServer((req, res) => {
    if (req.method === 'POST' && req.url?.startsWith('/v1/')) {
      // An OpenAI-compatible completion (llm-upstream.ts), for examples/llm-tokens.yaml.
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => answerCompletion(req, res, Buffer.concat(chunks).toString('utf8')));
      req.on('error', () => res.destroy());
      return;
    }
    let bytes = 0;
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on('end', () => {
      const body = JSON.stringify({ ok: true, method: req.method, path: req.url, receivedBytes: bytes, at: new Date().toISOString() });
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
    req.on('error', () => res.destroy());
  });
  server.keepAliveTimeout = 10_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEMO_UPSTREAM_PORT, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      resolve({
        url: `http://${address.address}:${address.port}`,
        server,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
