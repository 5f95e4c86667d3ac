// Raw TCP clients for the slow-client tests: they send exactly the bytes given
// (or nothing) and report what came back and when the gateway closed them.
import { connect, type Socket } from 'node:net';

export interface RawClient {
  socket: Socket;
  /** Everything the gateway sent. */
  received(): string;
  /** Resolves when the gateway closed (or reset) the connection. */
  closed: Promise<void>;
}

export function rawClient(url: string, first = ''): Promise<RawClient> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      if (first) socket.write(first);
      resolve({ socket, received: () => data, closed });
    });
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('error', (error) => reject(error));
  });
}

/** The status code of the first response in `text`, or undefined if none came. */
export function statusOf(text: string): number | undefined {
  const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
  return match ? Number(match[1]) : undefined;
}

/** Resolves `true` if `promise` settles within `ms`. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const result = await Promise.race([promise.then(() => true as const), late]);
  clearTimeout(timer);
  return result;
}
