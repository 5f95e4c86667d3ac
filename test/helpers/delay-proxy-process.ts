// The delaying proxy's own process (started by delay-proxy.ts): listens on a
// free loopback port, says which on IPC, takes new delays on IPC. Delays
// under a millisecond are kept: node's timers round up to 1 ms, so the last
// stretch before a chunk's release is waited with setImmediate.
import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Delay, DelayProxyOptions } from './delay-proxy.js';

const options = JSON.parse(process.argv[2] ?? '{}') as DelayProxyOptions;
const delays = { toServer: options.toServer, toClient: options.toClient };
/** While partitioned nothing is released; every direction's drain is woken on heal. */
let partitioned = false;
const drains = new Set<() => void>();

const server = createServer((client) => {
  const upstream = connect({ host: '127.0.0.1', port: options.targetPort });
  for (const socket of [client, upstream]) {
    socket.setNoDelay(true);
    socket.on('error', () => {
      client.destroy();
      upstream.destroy();
    });
  }
  pipeDelayed(client, upstream, () => delays.toServer);
  pipeDelayed(upstream, client, () => delays.toClient);
});
server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
process.on('message', (message: Partial<typeof delays> & { partitioned?: boolean }) => {
  if (message.toServer) delays.toServer = message.toServer;
  if (message.toClient) delays.toClient = message.toClient;
  if (message.partitioned !== undefined) partitioned = message.partitioned;
  if (!partitioned) for (const drain of drains) drain();
  process.send?.({ applied: true });
});
process.on('disconnect', () => process.exit(0));

/** Copies `from` to `to`, each chunk held until its release time, in order; an end follows the last chunk. */
function pipeDelayed(from: Socket, to: Socket, delay: () => Delay): void {
  const queue: { release: number; send: () => void }[] = [];
  let lastRelease = 0;
  let waiting = false;
  const drain = () => {
    waiting = false;
    if (partitioned) return;
    const now = performance.now();
    while (queue.length > 0 && queue[0]!.release <= now) queue.shift()!.send();
    if (queue.length === 0) return;
    waiting = true;
    const wait = queue[0]!.release - now;
    if (wait > 1.5) setTimeout(drain, wait - 1);
    else setImmediate(drain);
  };
  const wake = () => {
    if (!waiting) drain();
  };
  drains.add(wake);
  from.on('close', () => drains.delete(wake));
  const push = (send: () => void, release: number) => {
    queue.push({ release, send });
    if (!waiting) drain();
  };
  from.on('data', (chunk) => {
    const { ms, jitterMs = 0, spike } = delay();
    const spikeMs = spike && Math.random() < spike.probability ? spike.ms : 0;
    // Never before the chunk ahead of it: TCP keeps the order, so must the distance.
    lastRelease = Math.max(lastRelease, performance.now() + ms + Math.random() * jitterMs + spikeMs);
    push(() => to.destroyed || to.write(chunk), lastRelease);
  });
  from.on('end', () => push(() => to.end(), lastRelease));
}
