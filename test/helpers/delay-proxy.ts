// Distance between Sluice and Redis on one machine (this kernel has no netem):
// a TCP proxy on a free loopback port that holds each chunk, per direction,
// for a fixed delay plus a random jitter, keeping the byte order (a chunk is
// never released before the one ahead of it). A round trip costs
// toServer + toClient delays, plus up to both jitters.
import { createServer, type Server, type Socket, connect } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface Delay {
  /** Fixed one-way delay, ms. */
  ms: number;
  /** Up to this much more per chunk, uniformly drawn, ms. */
  jitterMs?: number;
}

export interface DelayProxyOptions {
  /** Where the proxy forwards to (127.0.0.1). */
  targetPort: number;
  toServer: Delay;
  toClient: Delay;
}

export interface DelayProxy {
  readonly port: number;
  /** Changes the delays for the chunks that arrive from now on. */
  setDelays(toServer: Delay, toClient: Delay): void;
  close(): Promise<void>;
}

export async function startDelayProxy(options: DelayProxyOptions): Promise<DelayProxy> {
  const delays = { toServer: options.toServer, toClient: options.toClient };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect({ host: '127.0.0.1', port: options.targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.setNoDelay(true);
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
      socket.on('close', () => sockets.delete(socket));
    }
    pipeDelayed(client, upstream, () => delays.toServer);
    pipeDelayed(upstream, client, () => delays.toClient);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    setDelays(toServer, toClient) {
      delays.toServer = toServer;
      delays.toClient = toClient;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Copies `from` to `to`, each chunk held until its release time; an end is passed on after the last chunk. */
function pipeDelayed(from: Socket, to: Socket, delay: () => Delay): void {
  let lastRelease = 0;
  const at = (release: number, action: () => void) => setTimeout(action, Math.max(0, release - performance.now()));
  from.on('data', (chunk) => {
    const { ms, jitterMs = 0 } = delay();
    // Never before the chunk ahead of it: TCP keeps the order, so must the distance.
    lastRelease = Math.max(lastRelease, performance.now() + ms + Math.random() * jitterMs);
    at(lastRelease, () => {
      if (!to.destroyed) to.write(chunk);
    });
  });
  from.on('end', () => at(lastRelease, () => to.end()));
}
