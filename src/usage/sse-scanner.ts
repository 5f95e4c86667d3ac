// A bounded scanner of a `text/event-stream` body, fed the chunks as they are
// relayed (it never holds the response back): it keeps only the current
// event's `data:` bytes, up to a cap, and hands each whole event's data to
// `onEvent`. An event larger than the cap is skipped, not buffered, so a
// stream of any length costs at most the cap. Lines end in LF or CRLF (the
// streams of OpenAI-compatible APIs); a lone CR is kept as part of the line.

/** The most bytes of one event's data kept: an OpenAI usage event is a few hundred bytes. */
export const MAX_EVENT_BYTES = 64 * 1024;

const LF = 0x0a;
const CR = 0x0d;
const DATA = Buffer.from('data:');
const NEWLINE = Buffer.from('\n');

export class SseScanner {
  /** The current line's bytes (up to the cap), as pieces of the chunks. */
  private line: Buffer[] = [];
  private lineBytes = 0;
  /** The current event's data lines, joined by LF, up to the cap. */
  private data: Buffer[] = [];
  private dataBytes = 0;
  private hasData = false;
  /** The current event went past the cap: skipped until its blank line. */
  private oversize = false;
  /** Events skipped for their size. */
  skipped = 0;

  /**
   * `needles`: an event's data is decoded and handed on only when it holds one
   * of them (the usage field's quoted name): the stream's other events, nearly
   * all of them, cost a byte search instead of a decode and a JSON parse.
   * Empty: every event.
   */
  constructor(
    private readonly onEvent: (data: string) => void,
    private readonly maxBytes = MAX_EVENT_BYTES,
    private readonly needles: readonly Buffer[] = [],
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let lf = chunk.indexOf(LF, start); lf !== -1; lf = chunk.indexOf(LF, start)) {
      this.keep(chunk.subarray(start, lf));
      this.endLine();
      start = lf + 1;
    }
    if (start < chunk.length) this.keep(chunk.subarray(start));
  }

  /** The stream ended: an event not closed by a blank line is not dispatched (the SSE rule). */
  end(): void {
    this.line = [];
    this.data = [];
  }

  /** The longest line kept: `data: ` and the cap, and a CR. */
  private get lineCap(): number {
    return this.maxBytes + DATA.length + 2;
  }

  private keep(piece: Buffer): void {
    if (piece.length === 0) return;
    this.lineBytes += piece.length;
    if (this.lineBytes > this.lineCap) {
      this.line = []; // past the cap: the rest of this line is only counted
      return;
    }
    // A view of the chunk until the line ends: only a data line kept past it is copied (endLine), so the
    // chunk, gone on to the client, is pinned no longer than the line it holds.
    this.line.push(piece);
  }

  private endLine(): void {
    const tooLong = this.lineBytes > this.lineCap;
    const viewOfChunk = this.line.length === 1;
    let line = viewOfChunk ? this.line[0]! : Buffer.concat(this.line);
    this.line = [];
    this.lineBytes = 0;
    if (tooLong) {
      this.oversize = true;
      return;
    }
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
    if (line.length === 0) {
      this.dispatch();
      return;
    }
    if (!line.subarray(0, DATA.length).equals(DATA)) return; // event:, id:, comments: not kept
    let value = line.subarray(DATA.length);
    if (value[0] === 0x20) value = value.subarray(1);
    const added = (this.hasData ? 1 : 0) + value.length;
    if (this.oversize || this.dataBytes + added > this.maxBytes) {
      this.oversize = true;
      this.data = [];
      return;
    }
    if (this.hasData) this.data.push(NEWLINE);
    // A one-piece line is a view of a chunk: copied; a line of several pieces was joined into a buffer of its own.
    this.data.push(viewOfChunk ? Buffer.from(value) : value);
    this.dataBytes += added;
    this.hasData = true;
  }

  private dispatch(): void {
    if (this.oversize) this.skipped++;
    else if (this.hasData) {
      const data = this.data.length === 1 ? this.data[0]! : Buffer.concat(this.data, this.dataBytes);
      if (this.needles.length === 0 || this.needles.some((needle) => data.includes(needle))) this.onEvent(data.toString('utf8'));
    }
    this.data = [];
    this.dataBytes = 0;
    this.hasData = false;
    this.oversize = false;
  }
}
