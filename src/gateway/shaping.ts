// Traffic shaping: a leaky-bucket decision may accept a request but ask to hold
// it `delayMs` first. Held requests are counted per process; past the cap new
// ones are refused rather than piling up timers and sockets without bound.
import type { ServerResponse } from 'node:http';

export class ShapingQueue {
  private held = 0;

  constructor(private readonly maxHeld: number) {}

  get size(): number {
    return this.held;
  }

  /** Runs `release` after `delayMs`, or never if the client leaves first. False when the queue is full. */
  hold(res: ServerResponse, delayMs: number, release: () => void): boolean {
    if (this.held >= this.maxHeld) return false;
    this.held++;
    const onClose = () => {
      clearTimeout(timer);
      this.held--;
    };
    const timer = setTimeout(() => {
      res.off('close', onClose);
      this.held--;
      release();
    }, delayMs);
    res.once('close', onClose);
    return true;
  }
}
