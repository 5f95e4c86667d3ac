// One upstream attempt's answer streamed into the client's response, as an
// undici dispatch handler. `pool.stream()` made, per request, an AsyncResource,
// a promise, an object of the parsed headers and the listeners of
// `stream.finished()` on the response; this handler makes none of them and
// hands the upstream's raw header list on, since those allocations per request showed in the gateway's CPU.
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Dispatcher } from 'undici';
import { clientLeft } from './client-left.js';

type Controller = Dispatcher.DispatchController;

/** The upstream's status and raw header list came: write the response head and say `relay`, or `discard` the answer (it will be retried). */
export type OnHead = (statusCode: number, rawHeaders: readonly (Buffer | string)[]) => 'relay' | 'discard';
/** The attempt ended: `error` undefined when the upstream's answer is whole; `discarded` when it was not relayed. */
export type OnEnd = (error: Error | undefined, discarded: boolean) => void;

export class ResponseRelay implements Dispatcher.DispatchHandler {
  private controller: Controller | undefined;
  /** Set when the attempt is cut before undici started it (still queued in the pool). */
  private cutReason: Error | undefined;
  private discarding = false;
  private ended = false;
  private readonly onDrain = () => this.controller?.resume();

  constructor(
    private readonly res: ServerResponse,
    private readonly onHead: OnHead,
    private readonly onEnd: OnEnd,
    /** Shown each relayed chunk before it is written (usage/usage-reader.ts). */
    private readonly tap?: { data(chunk: Buffer): void },
  ) {}

  /** Stops the upstream request (the client left, or the headers' time ran out). */
  cut(reason: Error): void {
    if (this.controller) this.controller.abort(reason);
    else this.cutReason = reason;
  }

  onRequestStart(controller: Controller): void {
    this.controller = controller;
    if (this.cutReason) controller.abort(this.cutReason);
  }

  onResponseStart(controller: Controller, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return; // 1xx informational answers are not relayed
    // undici's core hands the raw list on (names in the upstream's case, duplicates kept); the object is the fallback.
    const raw = controller.rawHeaders;
    this.discarding = this.onHead(statusCode, Array.isArray(raw) ? raw : flatten(headers)) === 'discard';
  }

  onResponseData(controller: Controller, chunk: Buffer): void {
    if (this.discarding) return;
    this.tap?.data(chunk);
    if (this.res.write(chunk)) return;
    // A reset HTTP/2 stream never drains: waiting for it would hold the upstream connection for good.
    if (clientLeft(this.res)) {
      controller.abort(new Error('the client went away'));
      return;
    }
    // The client reads slower than the upstream sends: hold the upstream until it drains.
    controller.pause();
    this.res.once('drain', this.onDrain);
  }

  onResponseEnd(): void {
    if (!this.discarding) this.res.end();
    this.end(undefined);
  }

  onResponseError(_controller: Controller, error: Error): void {
    this.end(error);
  }

  private end(error: Error | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.res.off('drain', this.onDrain);
    this.onEnd(error, this.discarding);
  }
}

function flatten(headers: IncomingHttpHeaders): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string') out.push(name, value);
    else if (value) for (const item of value) out.push(name, item);
  }
  return out;
}
