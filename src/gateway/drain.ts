// Shutdown without resets. Once draining, every response says `Connection:
// close` and node closes its socket after it, so a keep-alive client never
// sends on a socket we then close. Sockets idle when the drain begins are NOT
// closed by us: their client may be sending a request at that very moment and
// could not tell whether it was processed. They go by the keep-alive timeout
// the client was told (`Keep-Alive: timeout=N`, which clients such as undici
// undercut and close themselves), by carrying one more request (answered with
// Connection: close), or when the grace period ends.
import type { Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';

export class Drain {
  private active = false;
  private readonly open = new Set<ServerResponse>();

  get draining(): boolean {
    return this.active;
  }

  /** Called for every response as its request arrives. */
  track(res: ServerResponse): void {
    if (this.active) {
      res.shouldKeepAlive = false;
      return;
    }
    this.open.add(res);
    res.once('close', () => this.open.delete(res));
  }

  /** Stops accepting and waits for every connection to end, for up to `graceMs`; then `late` cuts what is left. */
  async run(server: Server, graceMs: number, late: () => Promise<unknown>): Promise<void> {
    this.active = true;
    for (const res of this.open) if (!res.headersSent) res.shouldKeepAlive = false;
    this.open.clear();
    // http.Server#close would also close idle keep-alive sockets at once (the race above): stop accepting only.
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), graceMs);
    });
    if ((await Promise.race([closed, expired])) === 'late') {
      server.closeAllConnections();
      await late();
      await closed;
    }
    clearTimeout(timer);
    server.close(); // nothing left to close; stops node's header-timeout checks
  }
}
