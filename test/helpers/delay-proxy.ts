// Distance between Sluice and Redis on one machine (this kernel has no netem):
// a TCP proxy on a free loopback port that holds each chunk, per direction,
// for a fixed delay plus a random jitter, keeping the byte order (a chunk is
// never released before the one ahead of it). A round trip costs
// toServer + toClient delays, plus up to both jitters.
//
// The proxy runs in a child process of its own, as the network is not in the
// gateway's event loop: in process, a burst of decisions would delay the
// proxy's timers, and the distance would grow with the load it measures.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface Delay {
  /** Fixed one-way delay, ms (fractions of a millisecond are kept). */
  ms: number;
  /** Up to this much more per chunk, uniformly drawn, ms. */
  jitterMs?: number;
  /** Now and then a chunk is held this much longer (a cross-zone spike), with this probability per chunk. */
  spike?: { ms: number; probability: number };
}

export interface DelayProxyOptions {
  /** Where the proxy forwards to (127.0.0.1). */
  targetPort: number;
  toServer: Delay;
  toClient: Delay;
}

export interface DelayProxy {
  readonly port: number;
  /** Changes the delays for the chunks that arrive from now on; resolves once the proxy has them. */
  setDelays(toServer: Delay, toClient: Delay): Promise<void>;
  /**
   * A partition, not a crash: nothing passes either way, no connection is
   * reset or closed (packets dropped, TCP retransmitting), until heal(), which
   * delivers what was held, in order, as TCP's retransmissions would.
   */
  partition(): Promise<void>;
  heal(): Promise<void>;
  close(): Promise<void>;
}

export type ProxyMessage = { port: number } | { applied: true };

export async function startDelayProxy(options: DelayProxyOptions): Promise<DelayProxy> {
  // Compiled (scripts/build-tests.mjs), this module has the proxy's compiled process beside it.
  const compiled = import.meta.url.endsWith('.js');
  const child: ChildProcess = fork(fileURLToPath(new URL(compiled ? './delay-proxy-process.js' : './delay-proxy-process.ts', import.meta.url)), [JSON.stringify(options)], {
    execArgv: compiled ? [] : ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const next = () => new Promise<ProxyMessage>((resolve, reject) => {
    child.once('message', (message) => resolve(message as ProxyMessage));
    child.once('exit', (code) => reject(new Error(`delay proxy exited with ${code}`)));
  });
  const { port } = (await next()) as { port: number };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    port,
    async setDelays(toServer, toClient) {
      const applied = next();
      child.send({ toServer, toClient });
      await applied;
    },
    async partition() {
      const applied = next();
      child.send({ partitioned: true });
      await applied;
    },
    async heal() {
      const applied = next();
      child.send({ partitioned: false });
      await applied;
    },
    async close() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
