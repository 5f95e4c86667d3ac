// The upstream every gateway forwards to: a tiny Node HTTP server answering a
// small JSON body, in its own process.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from './serve.js';

const BODY = JSON.stringify({ ok: true });

await serve(
  () =>
    new Promise((resolve) => {
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) });
          res.end(BODY);
        });
      });
      server.keepAliveTimeout = 30_000;
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        resolve({
          url: `http://127.0.0.1:${port}`,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              server.closeAllConnections();
            }),
        });
      });
    }),
);
