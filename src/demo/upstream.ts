// A tiny upstream for the quick start: answers every request with JSON saying
// what it received, so `sluice start --demo-upstream` works with nothing else.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DemoUpstream {
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

export const DEMO_UPSTREAM_PORT = 8090;

export function startDemoUpstream(options: { host?: string; port?: number } = {}): Promise<DemoUpstream> {
  const server = createServer((req, res) => {
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
