// Shutdown without resets. Once draining, every response says `Connection:
// close` and node closes its socket after it, so a keep-alive client never
// sends on a socket we then close. Sockets idle when the drain begins are NOT
// closed by us: their client may be sending a request at that very moment and
// could not tell whether it was processed. They go by the keep-alive timeout
// the client was told (`Keep-Alive: timeout=N`, which clients such as undici
// undercut and close themselves), by carrying one more request (answered with
// Connection: close), or when the grace period ends.
import { type Server, ServerResponse } from 'node:http';
import type { Http2Session } from 'node:http2';
import { Server as NetServer } from 'node:net';

export class Drain {
  private active = false;

  get draining(): boolean {
    return this.active;
  }

  /**
   * The ServerResponse the gateway's HTTP/1.1 listeners make: once draining, a
   * response says `Connection: close` as its headers go out, whether it began
   * before the drain or after. Nothing is kept per request: a Set of the open
   * responses and a close listener per request were measurably costly on the
   * hot path, so the drain is read when the headers go out instead.
   */
  readonly Response: typeof ServerResponse = drainingResponse(this);

  /**
   * Stops accepting and waits for every connection to end, for up to `graceMs`;
   * then `late` cuts what is left. HTTP/2 `sessions` get a GOAWAY at once (their
   * open streams finish, no new one starts) and are destroyed at the grace's end.
   */
  async run(server: Server, graceMs: number, late: () => Promise<unknown>, sessions: ReadonlySet<Http2Session> = new Set()): Promise<void> {
    this.active = true;
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

/** writeHead is where every response's headers go out (an implicit header calls it too): the drain's flag is read there. */
function drainingResponse(drain: Drain): typeof ServerResponse {
  const writeHead = ServerResponse.prototype.writeHead as (this: ServerResponse, status: number, reason?: unknown, headers?: unknown) => ServerResponse;
  class DrainingResponse extends ServerResponse {}
  DrainingResponse.prototype.writeHead = function (this: ServerResponse, status: number, reason?: unknown, headers?: unknown) {
    if (drain.draining) this.shouldKeepAlive = false;
    return writeHead.call(this, status, reason, headers);
  } as ServerResponse['writeHead'];
  return DrainingResponse as typeof ServerResponse; // the generic constructor's type, which a subclass cannot spell
}
