// Shutdown without resets. Once draining, every response says `Connection:
// close` and node closes its socket after it, so a keep-alive client never
// sends on a socket we then close. Sockets idle when the drain begins are NOT
// closed by us: their client may be sending a request at that very moment and
// could not tell whether it was processed. They go by the keep-alive timeout
// the client was told (`Keep-Alive: timeout=N`, which clients such as undici
// undercut and close themselves), by carrying one more request (answered with
// Connection: close), or when the grace period ends.
import type { Server, ServerResponse } from 'node:http';
import type { Http2Session } from 'node:http2';
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

  /**
   * Stops accepting and waits for every connection to end, for up to `graceMs`;
   * then `late` cuts what is left. HTTP/2 `sessions` get a GOAWAY at once (their
   * open streams finish, no new one starts) and are destroyed at the grace's end.
   */
  async run(server: Server, graceMs: number, late: () => Promise<unknown>, sessions: ReadonlySet<Http2Session> = new Set()): Promise<void> {
    this.active = true;
    for (const res of this.open) if (!res.headersSent) res.shouldKeepAlive = false;
    this.open.clear();
    for (const session of sessions) session.close();
    // http.Server#close would also close idle keep-alive sockets at once (the race above): stop accepting only.
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), graceMs);
    });
    if ((await Promise.race([closed, expired])) === 'late') {
      server.closeAllConnections?.(); // an HTTP/2 server has no such list: its sessions are destroyed instead
      for (const session of sessions) session.destroy();
      await late();
      await closed;
    }
    clearTimeout(timer);
    server.close(); // nothing left to close; stops node's header-timeout checks
  }
}
