// HTTP/2 requests start once the read that brought them is parsed. nghttp2
// hands a stream's HEADERS to the gateway before it parses the frames after
// them, so a client that opens a stream and resets it in the same packet (the
// rapid-reset attack, CVE-2023-44487, writes thousands of such pairs at once)
// would otherwise have each request routed, decided and forwarded before its
// RST_STREAM is seen. Started after the read instead (one setImmediate for
// the whole batch), a stream reset in it, or one whose connection the session
// guard cut for its reset rate, is dropped having cost nothing but node's own
// stream objects: no decision, no log line, no upstream request.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type ServerHttp2Stream } from 'node:http2';
import { clientLeft } from './client-left.js';
import { cutForResets } from './http2-session-guard.js';

type Start = (req: IncomingMessage, res: ServerResponse) => void;

export class AfterRead {
  private queue: [IncomingMessage, ServerResponse][] = [];
  private scheduled = false;
  /** HTTP/2 streams dropped because they were gone by the time they would have started. */
  dropped = 0;

  constructor(private readonly start: Start) {}

  /** Starts an HTTP/1.1 request now, an HTTP/2 one after the current read, unless its stream is gone by then. */
  accept(req: IncomingMessage, res: ServerResponse): void {
    if (req.httpVersionMajor !== 2) {
      this.start(req, res);
      return;
    }
    this.queue.push([req, res]);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.run);
  }

  private readonly run = (): void => {
    const batch = this.queue;
    this.queue = [];
    this.scheduled = false;
    for (const [req, res] of batch) {
      const stream = (res as unknown as { stream: ServerHttp2Stream }).stream;
      if (clientLeft(res)) this.dropped++;
      else if (cutForResets(stream.session)) {
        this.dropped++;
        stream.close(constants.NGHTTP2_REFUSED_STREAM); // the connection is going: a well-behaved client may retry it elsewhere
      } else this.start(req, res);
    }
  };
}
