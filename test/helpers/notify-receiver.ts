// A webhook receiver for the notification tests: an HTTP server on a free
// loopback port that records each POST (headers and raw body) and answers as
// the test says: a status, or never (the request hangs until close).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface Receiver {
  readonly url: string;
  readonly received: Received[];
  /** The answer to the nth POST (0-based): a status, or 'hang'. */
  answer: (index: number) => number | 'hang';
  /** Resolves once `count` POSTs have arrived (the runner's timeout bounds the wait). */
  waitFor(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(answer: Receiver['answer'] = () => 204): Promise<Receiver> {
  const received: Received[] = [];
  let server!: Server;
  const receiver: Receiver = {
    url: '',
    received,
    answer,
    async waitFor(count) {
      while (received.length < count) await sleep(20);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const index = received.length;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const status = receiver.answer(index);
      if (status !== 'hang') res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return Object.assign(receiver, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` });
}
