// Bounds on one HTTP/2 connection beyond what nghttp2 enforces: a session that
// has no stream open (none opened yet, or a header block never finished, which
// nghttp2 keeps to itself) is closed after the listener's header deadline, or
// its keep-alive once streams have come and gone; and a client resetting
// streams faster than `maxResetsPerSecond` (the rapid-reset attack,
// CVE-2023-44487: each reset stream still costs the gateway its work) gets
// GOAWAY ENHANCE_YOUR_CALM and loses the connection.
import { constants, type Http2Session, type ServerHttp2Stream } from 'node:http2';

export interface Http2SessionLimits {
  /** SETTINGS_MAX_CONCURRENT_STREAMS sent to every client. */
  maxConcurrentStreams: number;
  maxResetsPerSecond: number;
  headerTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export function guardSession(session: Http2Session, limits: Http2SessionLimits): void {
  let open = 0;
  let idle: NodeJS.Timeout | undefined;
  let windowStart = 0;
  let resets = 0;
  const cut = (code: number) => {
    clearTimeout(idle);
    if (session.destroyed) return;
    session.goaway(code);
    // GOAWAY first, so the client learns why; what is still open gets a moment, then the connection goes.
    session.close();
    setTimeout(() => session.destroy(), 1_000).unref();
  };
  const arm = (ms: number) => {
    clearTimeout(idle);
    idle = setTimeout(() => cut(constants.NGHTTP2_NO_ERROR), ms);
    idle.unref();
  };
  arm(limits.headerTimeoutMs);
  session.on('stream', (stream: ServerHttp2Stream) => {
    open++;
    clearTimeout(idle);
    stream.once('close', () => {
      open--;
      if (stream.rstCode !== constants.NGHTTP2_NO_ERROR && tooManyResets()) return cut(constants.NGHTTP2_ENHANCE_YOUR_CALM);
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
