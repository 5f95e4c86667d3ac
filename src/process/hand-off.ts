// With workers, the primary owns the gateway's listening socket and hands each
// accepted connection to a serving worker in turn (IPC, the socket's handle
// moves to the worker). node:cluster's own round robin closes the connections
// it queued when the last worker stops listening (the client sees a reset); here
// the primary stops accepting first, so a client connecting during the drain
// is refused (ECONNREFUSED) as with one process, and no accepted connection is
// ever dropped.
import type { Worker } from 'node:cluster';
import type { Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { isSluiceMessage } from './messages.js';

/** Primary side: accepts on the gateway's address; `workers` are those serving now. */
export class ConnectionHandOff {
  private next = 0;
  private readonly server: Server;

  constructor(private readonly workers: () => Worker[]) {
    this.server = createServer({ pauseOnConnect: true }, (socket) => this.handOff(socket));
  }

  listen(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
  }

  /**
   * Stops accepting; connections already handed off are the workers' to drain,
   * so nothing is left here to wait for. (net.Server's close callback would
   * wait on the sockets it handed off, polling the workers that took them; when
   * every such worker is gone — replaced by SIGUSR2 — node counts one
   * connection that nothing ever ends, and the callback never fires.)
   */
  close(): Promise<void> {
    if (this.server.listening) this.server.close();
    return Promise.resolve();
  }

  private handOff(socket: Socket): void {
    const serving = this.workers().filter((worker) => worker.isConnected());
    const worker = serving[this.next++ % Math.max(1, serving.length)];
    if (!worker) {
      socket.destroy();
      return;
    }
    worker.send({ sluice: 'connection' }, socket, (error) => {
      if (error) socket.destroy();
    });
  }
}

/**
 * Worker side: each handed connection joins the gateway's own server as if it
 * had accepted it, counted in the server's connections so that the drain
 * waits for it (what net.Server does for the sockets it accepts itself).
 */
export function acceptHandedConnections(server: HttpServer): void {
  process.on('message', (message: unknown, socket: unknown) => {
    if (!isSluiceMessage<{ sluice: string }>(message) || message.sluice !== 'connection' || !socket) return;
    const accepted = socket as Socket & { _server?: unknown; server?: unknown };
    const counted = server as HttpServer & { _connections: number };
    accepted._server = server;
    accepted.server = server;
    counted._connections++;
    server.emit('connection', accepted);
  });
}
