// The streamed path's upstream (bench/gateway-stream.ts): every request is
// answered a `text/event-stream` of about `totalBytes` in writes of
// `chunkBytes` (events of about 1 KiB, as an LLM's chunks with `"usage":null`),
// then an event carrying `usage.total_tokens` and `[DONE]`, as fast as the
// reader takes them (backpressure minded). `X-Accel-Buffering: no` keeps nginx
// from buffering it, as an SSE upstream would ask.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { args, serve } from './serve.js';

const { totalBytes, chunkBytes } = args<{ totalBytes: number; chunkBytes: number }>();

const content = 'x'.repeat(900);
const event = `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${content}"}}],"usage":null}\n\n`;
const chunk = Buffer.from(event.repeat(Math.max(1, Math.floor(chunkBytes / event.length))));
const LAST = 'data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2000,"total_tokens":2010}}\n\ndata: [DONE]\n\n';

await serve(
  () =>
    new Promise((resolve) => {
      const server = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' });
          let sent = 0;
          const pump = () => {
            while (sent < totalBytes) {
              sent += chunk.length;
              if (!res.write(chunk)) return void res.once('drain', pump);
            }
            res.end(LAST);
          };
          pump();
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
