// A local OTLP/HTTP sink for the tracing rows of bench:gateway: accepts each
// export (http/protobuf), counts its bytes and answers 200 at once, in a
// process of its own so its CPU is not the gateway's.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from './serve.js';

await serve(
  () =>
    new Promise((resolve) => {
      let bytes = 0;
      const server = createServer((req, res) => {
        req.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf', 'x-bytes-so-far': String(bytes) }).end());
      });
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
