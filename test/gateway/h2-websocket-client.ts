// A WebSocket client over HTTP/2 (RFC 8441) for the tests: node's http2 client
// opens the extended CONNECT stream, and ws's own Sender and Receiver frame
// and read the messages on it (masked, as a client must).
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders } from 'node:http2';
import type { Writable } from 'node:stream';
import * as ws from 'ws';

// @types/ws leaves out the two classes ws exports for this.
const { Sender, Receiver } = ws as unknown as {
  Sender: { frame(data: Buffer, options: { fin: boolean; opcode: number; mask: boolean; readOnly: boolean; rsv1: boolean }): Buffer[] };
  Receiver: new (options: { isServer: boolean; binaryType: 'nodebuffer' }) => Writable;
};

export interface Message {
  data: Buffer;
  binary: boolean;
}

export interface Http2WebSocket {
  status: number;
  headers: IncomingHttpHeaders;
  stream: ClientHttp2Stream;
  send(data: string | Buffer): void;
  /** The next message the server sends. */
  next(): Promise<Message>;
  /** Resolves when the stream closes: with the RST_STREAM code (0: NO_ERROR) and whether it ended without an error. */
  closed: Promise<{ rstCode: number; error: boolean }>;
}

/** Opens `path` as a WebSocket stream on `session`; resolves once the server answered (200 or not). */
export function openHttp2WebSocket(session: ClientHttp2Session, path: string, headers: Record<string, string> = {}): Promise<Http2WebSocket> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'CONNECT', ':protocol': 'websocket', ':scheme': 'https', ':path': path, 'sec-websocket-version': '13', ...headers });
    const receiver = new Receiver({ isServer: false, binaryType: 'nodebuffer' });
    const queued: Message[] = [];
    const waiting: ((message: Message) => void)[] = [];
    receiver.on('message', (data: Buffer, binary: boolean) => {
      const message = { data, binary };
      const waiter = waiting.shift();
      if (waiter) waiter(message);
      else queued.push(message);
    });
    receiver.on('error', (bad: Error) => stream.destroy(bad));
    let error = false;
    stream.on('error', () => {
      error = true;
    });
    const closed = new Promise<{ rstCode: number; error: boolean }>((done) => stream.once('close', () => done({ rstCode: stream.rstCode ?? 0, error })));
    stream.once('response', (answered) => {
      if (answered[':status'] === 200) stream.pipe(receiver); // any other answer's body is the gateway's JSON, not frames
      else stream.resume();
      resolve({
        status: Number(answered[':status']),
        headers: answered,
        stream,
        send: (data) => {
          const binary = typeof data !== 'string';
          for (const part of Sender.frame(Buffer.from(data), { fin: true, opcode: binary ? 2 : 1, mask: true, readOnly: false, rsv1: false })) stream.write(part);
        },
        next: () => new Promise((done) => (queued.length > 0 ? done(queued.shift()!) : waiting.push(done))),
        closed,
      });
    });
    stream.once('error', reject);
  });
}
