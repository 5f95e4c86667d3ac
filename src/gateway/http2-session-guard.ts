// Bounds on one HTTP/2 connection beyond what nghttp2 enforces: a session that
// has no stream open (none opened yet, or a header block never finished, which
// nghttp2 keeps to itself) is closed after the listener's header deadline, or
// its keep-alive once streams have come and gone; and a client resetting
// streams faster than `maxResetsPerSecond` (the rapid-reset attack,
// CVE-2023-44487: each reset stream still costs the gateway its work) gets
// GOAWAY ENHANCE_YOUR_CALM and loses the connection; a stream of it that
// had not started by then never does (cutForResets, h2-after-read.ts).
import { constants, type Http2Session, type ServerHttp2Stream } from 'node:http2';

export interface Http2SessionLimits {
  /** SETTINGS_MAX_CONCURRENT_STREAMS sent to every client. */
  maxConcurrentStreams: number;
  maxResetsPerSecond: number;
  headerTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

/** Sessions cut for their reset rate: what they opened and the gateway has not started yet is refused, not handled. */
const cut = new WeakSet<Http2Session>();

export function cutForResets(session: Http2Session | undefined): boolean {
  return session !== undefined && cut.has(session);
}

/** `onCut` hears of a connection cut for its resets (reset-cooldown.ts refuses its address a while). */
export function guardSession(session: Http2Session, limits: Http2SessionLimits, onCut?: (session: Http2Session) => void): void {
  let open = 0;
  let idle: NodeJS.Timeout | undefined;
  let windowStart = 0;
  let resets = 0;
  const close = (code: number) => {
    clearTimeout(idle);
    if (session.destroyed) return;
    if (code === constants.NGHTTP2_ENHANCE_YOUR_CALM) {
      cut.add(session);
      onCut?.(session);
    }
    session.goaway(code);
    // GOAWAY first, so the client learns why; what is still open gets a moment, then the connection goes.
    // (close() ends the socket once no stream is open, reading on to the client's FIN: a destroy() instead
    // would reset a connection the client is still writing to, and the client could lose the GOAWAY.)
    session.close();
    setTimeout(() => session.destroy(), 1_000).unref();
  };
  const arm = (ms: number) => {
    clearTimeout(idle);
    idle = setTimeout(() => close(constants.NGHTTP2_NO_ERROR), ms);
    idle.unref();
  };
  arm(limits.headerTimeoutMs);
  session.on('stream', (stream: ServerHttp2Stream) => {
    open++;
    clearTimeout(idle);
    stream.once('close', () => {
      open--;
      if (stream.rstCode !== constants.NGHTTP2_NO_ERROR && tooManyResets()) return close(constants.NGHTTP2_ENHANCE_YOUR_CALM);
      if (open === 0) arm(limits.keepAliveTimeoutMs);
    });
  });
  session.once('close', () => clearTimeout(idle));
  // Counted in one-second windows: a burst that crosses a window's edge gets at most twice the bound.
  const tooManyResets = (): boolean => {
    const now = Date.now();
    if (now - windowStart >= 1_000) {
      windowStart = now;
      resets = 0;
    }
    return ++resets > limits.maxResetsPerSecond;
  };
}
