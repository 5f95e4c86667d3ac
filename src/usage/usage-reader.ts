// Reads a response's usage as it is relayed, never holding it back: a
// header at once; a JSON body collected up to a cap and parsed at its end; a
// `text/event-stream` scanned event by event (sse-scanner.ts), the last event
// carrying the field winning (OpenAI-compatible streams send usage in the
// final event before `[DONE]`). Memory is bounded whatever the response's size.
import { SseScanner } from './sse-scanner.js';
import { valueAt } from './json-path.js';
import type { UsageSource } from './types.js';

/** The most bytes of a JSON (non-stream) body kept for its usage: past it the usage is `too_large`. */
export const MAX_JSON_BYTES = 1024 * 1024;

/** What the response said for one source: a raw value, or why there is none. */
export type RawUsage = { readonly raw: unknown } | { readonly bad: 'missing' | 'too_large' | 'cut' };

export interface ResponseTap {
  head(status: number, rawHeaders: readonly (Buffer | string)[]): void;
  data(chunk: Buffer): void;
}

export class UsageReader implements ResponseTap {
  private readonly paths: (readonly string[])[];
  private readonly headers: string[];
  private headerValues = new Map<string, string>();
  private mode: 'none' | 'json' | 'sse' = 'none';
  private chunks: Buffer[] = [];
  private bytes = 0;
  private tooLarge = false;
  private scanner: SseScanner | undefined;
  /** Per JSON path: the last value a stream's event carried. */
  private readonly seen = new Map<string, unknown>();
  headSeen = false;

  constructor(sources: readonly UsageSource[], private readonly maxJsonBytes = MAX_JSON_BYTES) {
    this.paths = sources.flatMap((source) => (source.kind === 'json' ? [source.path] : []));
    this.headers = sources.flatMap((source) => (source.kind === 'header' ? [source.header] : []));
  }

  head(_status: number, rawHeaders: readonly (Buffer | string)[]): void {
    this.headSeen = true;
    let type = '';
    let encoded = false;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = String(rawHeaders[i]).toLowerCase();
      const value = String(rawHeaders[i + 1]);
      if (name === 'content-type') type = value.toLowerCase();
      else if (name === 'content-encoding') encoded = value.trim().toLowerCase() !== 'identity';
      else if (this.headers.includes(name) && !this.headerValues.has(name)) this.headerValues.set(name, value);
    }
    // A compressed body is relayed as it is and not read: its usage is missing.
    if (this.paths.length === 0 || encoded) return;
    if (type.startsWith('text/event-stream')) {
      this.mode = 'sse';
      // A JSON key is its name in quotes: an event without the last name of any path cannot hold the usage
      // (OpenAI's chunks all carry `"usage":null`; only the last one has `"total_tokens"`). A name written
      // with \u escapes would be missed and charged the fallback: no known API writes one.
      const needles = [...new Set(this.paths.map((path) => path[path.length - 1]!))].map((name) => Buffer.from(JSON.stringify(name)));
      this.scanner = new SseScanner((data) => this.onEvent(data), undefined, needles);
    } else this.mode = 'json';
  }

  data(chunk: Buffer): void {
    if (this.mode === 'sse') this.scanner!.push(chunk);
    else if (this.mode === 'json' && !this.tooLarge) {
      this.bytes += chunk.length;
      if (this.bytes > this.maxJsonBytes) {
        this.tooLarge = true;
        this.chunks = [];
      } else this.chunks.push(Buffer.from(chunk));
    }
  }

  /** What the response said for `source`; `complete`: the body ended whole. */
  result(source: UsageSource, complete: boolean): RawUsage {
    if (source.kind === 'header') {
      const value = this.headerValues.get(source.header);
      return value === undefined ? { bad: complete ? 'missing' : 'cut' } : { raw: value };
    }
    if (this.mode === 'sse') {
      const key = source.path.join('.');
      if (this.seen.has(key)) return { raw: this.seen.get(key) };
      return { bad: complete ? 'missing' : 'cut' };
    }
    if (!complete) return { bad: 'cut' };
    if (this.tooLarge) return { bad: 'too_large' };
    const json = this.parsed();
    const value = json === undefined ? undefined : valueAt(json, source.path);
    return value === undefined ? { bad: 'missing' } : { raw: value };
  }

  private parsedBody: unknown = undefined;
  private parsedDone = false;

  private parsed(): unknown {
    if (!this.parsedDone) {
      this.parsedDone = true;
      try {
        this.parsedBody = this.mode === 'json' ? JSON.parse(Buffer.concat(this.chunks, this.bytes).toString('utf8')) : undefined;
      } catch {
        this.parsedBody = undefined;
      }
      this.chunks = [];
    }
    return this.parsedBody;
  }

  private onEvent(data: string): void {
    if (data === '[DONE]') return;
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return; // not JSON: an event of another kind
    }
    for (const path of this.paths) {
      const value = valueAt(event, path);
      if (value !== undefined && value !== null) this.seen.set(path.join('.'), value);
    }
  }
}
